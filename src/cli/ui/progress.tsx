/** The upload progress bar (Ink; loaded only on a colour terminal). */
import { Box, Text, render } from 'ink';

const WIDTH = 30;

function kb(n: number): string {
  return n < 1024 * 1024 ? `${(n / 1024).toFixed(1)} KB` : `${(n / 1024 / 1024).toFixed(1)} MB`;
}

function Bar({ label, sent, total }: { label: string; sent: number; total: number }) {
  const frac = total > 0 ? Math.min(1, sent / total) : 1;
  const full = Math.round(frac * WIDTH);
  return (
    <Box>
      <Text>{label} </Text>
      <Text color="green">{'█'.repeat(full)}</Text>
      <Text dimColor>{'░'.repeat(WIDTH - full)}</Text>
      <Text> {Math.round(frac * 100)}% {kb(sent)}/{kb(total)}</Text>
    </Box>
  );
}

export interface Progress {
  update(sent: number): void;
  done(): void;
}

/** A progress bar on stderr; `done()` leaves the final state on screen. */
export function startProgress(label: string, total: number): Progress {
  let sent = 0;
  const app = render(<Bar label={label} sent={0} total={total} />, { stdout: process.stderr, patchConsole: false });
  return {
    update(n) {
      sent = n;
      app.rerender(<Bar label={label} sent={sent} total={total} />);
    },
    done() {
      app.rerender(<Bar label={label} sent={sent} total={total} />);
      app.unmount();
    },
  };
}
