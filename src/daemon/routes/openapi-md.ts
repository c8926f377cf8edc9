/** Renders an OpenAPI 3.1 document as Markdown (the spec's "Markdown version"). */
export interface OpenApiDoc {
  openapi: string;
  info: { title: string; version: string; description?: string };
  paths: Record<string, Record<string, OpenApiOperation>>;
  components?: Record<string, unknown>;
}

interface OpenApiOperation {
  operationId?: string;
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: { name: string; in: string; required?: boolean; schema?: { type?: string }; description?: string }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
  security?: unknown[];
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function openApiMarkdown(doc: OpenApiDoc): string {
  const out: string[] = [`# ${doc.info.title}`, '', `OpenAPI ${doc.openapi}, document version ${doc.info.version}.`, ''];
  if (doc.info.description) out.push(doc.info.description, '');
  const byTag = new Map<string, string[]>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method];
      if (!op) continue;
      const tag = op.tags?.[0] ?? 'other';
      const lines = byTag.get(tag) ?? [];
      lines.push(...operation(method, path, op));
      byTag.set(tag, lines);
    }
  }
  for (const [tag, lines] of [...byTag.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    out.push(`## ${tag}`, '', ...lines);
  }
  return out.join('\n');
}

function operation(method: string, path: string, op: OpenApiOperation): string[] {
  const out = [`### ${method.toUpperCase()} ${path}`, ''];
  if (op.summary) out.push(op.summary, '');
  if (op.description) out.push(op.description, '');
  const schemes = (op.security ?? []).flatMap((s) => Object.keys(s as object));
  out.push(`Auth: ${schemes.length ? schemes.join(' or ') : 'none'}${op.operationId ? ` · operationId \`${op.operationId}\`` : ''}`, '');
  if (op.parameters?.length) {
    out.push('| Parameter | In | Required | Type |', '|---|---|---|---|');
    for (const p of op.parameters) out.push(`| ${p.name} | ${p.in} | ${p.required ? 'yes' : 'no'} | ${p.schema?.type ?? ''} |`);
    out.push('');
  }
  const body = op.requestBody?.content;
  if (body) {
    for (const [type, c] of Object.entries(body)) {
      out.push(`Request body (\`${type}\`):`, '', '```json', JSON.stringify(c.schema ?? {}, null, 2), '```', '');
    }
  }
  if (op.responses) {
    out.push('| Status | Description |', '|---|---|');
    for (const [status, r] of Object.entries(op.responses)) out.push(`| ${status} | ${(r.description ?? '').replace(/\|/g, '\\|')} |`);
    out.push('');
  }
  return out;
}
