import net from 'node:net';
import { PG_SERVER } from './pg.js';

/**
 * A TCP relay to the test PostgreSQL that a test can cut (every connection dropped, no
 * new ones accepted) and start again on the same port: the database going away under a
 * running daemon, and coming back.
 */
export class PgRelay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  port = 0;

  /** Listens (again, on the same port once it had one); a relay that listens stays as it is. */
  async start(): Promise<void> {
    if (this.server?.listening) return;
    const target = new URL(PG_SERVER);
    this.server = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5432), target.hostname);
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on('close', () => this.sockets.delete(s));
        s.on('error', () => s.destroy());
      }
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((r) => this.server!.listen(this.port, '127.0.0.1', r));
    this.port = (this.server.address() as net.AddressInfo).port;
  }

  async cut(): Promise<void> {
    const closed = new Promise<void>((r) => this.server!.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await closed;
  }

  /** `url` (a test database's) through this relay */
  through(url: string): string {
    return url.replace(/127\.0\.0\.1:\d+|localhost:\d+/, `127.0.0.1:${this.port}`);
  }
}
