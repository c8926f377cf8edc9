/**
 * A small Prometheus registry: request counts and latency histograms by route and
 * status, upstream calls by provider and outcome. Counters are plain numbers in Maps
 * keyed by their label string, so recording is a Map lookup and an add.
 */
const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Distinct models counted per provider; beyond it a provider's other models count as model="other" (the proxy takes any model name). */
const MAX_MODELS_PER_PROVIDER = 200;

/** Settled calls' figures for one (provider, model): tokens and the cost charged. */
interface CallTotals {
  labels: string;
  prompt: number;
  completion: number;
  cached: number;
  costNano: number;
}

interface Histogram {
  counts: number[];
  sum: number;
  count: number;
}

/** A label value as the Prometheus text format writes it: backslash, double quote and newline escaped. */
export function labelValue(v: string | number): string {
  return String(v).replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function labels(obj: Record<string, string | number>): string {
  return Object.entries(obj)
    .map(([k, v]) => `${k}="${labelValue(v)}"`)
    .join(',');
}

export class Metrics {
  private readonly requests = new Map<string, Histogram>();
  private readonly upstream = new Map<string, number>();
  private readonly upstreamSeconds = new Map<string, Histogram>();
  private readonly counters = new Map<string, number>();
  /** provider -> model -> totals: found by two Map lookups, no string built per call */
  private readonly calls = new Map<string, Map<string, CallTotals>>();

  /** Lines other modules render at scrape time (gauges of live state: the provider keys' health) */
  private readonly collectors: (() => string[])[] = [];

  addCollector(fn: () => string[]): void {
    this.collectors.push(fn);
  }

  /** Label strings by their raw parts: built (escaped) once per route/status or provider/outcome, not per call. */
  private readonly labelCache = new Map<string, string>();

  private cached(raw: string, build: () => string): string {
    let l = this.labelCache.get(raw);
    if (l === undefined) {
      l = build();
      this.labelCache.set(raw, l);
    }
    return l;
  }

  observeRequest(method: string, route: string, status: number, seconds: number): void {
    const key = this.cached(`r\n${method}\n${route}\n${status}`, () => labels({ method, route, status }));
    observe(this.requests, key, seconds);
  }

  observeUpstream(provider: string, outcome: string, seconds?: number): void {
    const key = this.cached(`u\n${provider}\n${outcome}`, () => labels({ provider, outcome }));
    this.upstream.set(key, (this.upstream.get(key) ?? 0) + 1);
    if (seconds !== undefined) observe(this.upstreamSeconds, this.cached(`p\n${provider}`, () => labels({ provider })), seconds);
  }

  /** A finalized gateway call's tokens and customer cost (nano-USD), by provider and model (counted at settle). */
  observeCall(provider: string, model: string | null, prompt: number, completion: number, cached: number, costNano: number): void {
    let byModel = this.calls.get(provider);
    if (!byModel) this.calls.set(provider, (byModel = new Map()));
    let name = model ?? '';
    let t = byModel.get(name);
    if (!t) {
      if (byModel.size >= MAX_MODELS_PER_PROVIDER) name = 'other';
      t = byModel.get(name);
      if (!t) byModel.set(name, (t = { labels: labels({ provider, model: name }), prompt: 0, completion: 0, cached: 0, costNano: 0 }));
    }
    t.prompt += prompt;
    t.completion += completion;
    t.cached += cached;
    t.costNano += costNano;
  }

  /** A free-form counter, e.g. inc('agw_wallet_debits_total'). */
  inc(name: string, by = 1, lbl: Record<string, string> = {}): void {
    const key = `${name}{${labels(lbl)}}`;
    this.counters.set(key, (this.counters.get(key) ?? 0) + by);
  }

  render(): string {
    const out: string[] = [];
    out.push('# HELP agw_http_requests_total HTTP requests by route and status.');
    out.push('# TYPE agw_http_requests_total counter');
    for (const [k, h] of this.requests) out.push(`agw_http_requests_total{${k}} ${h.count}`);
    renderHistogram(out, 'agw_http_request_duration_seconds', 'HTTP request latency.', this.requests);
    out.push('# HELP agw_upstream_calls_total Upstream calls by provider and outcome.');
    out.push('# TYPE agw_upstream_calls_total counter');
    for (const [k, v] of this.upstream) out.push(`agw_upstream_calls_total{${k}} ${v}`);
    renderHistogram(out, 'agw_upstream_duration_seconds', 'Upstream call latency.', this.upstreamSeconds);
    this.renderCalls(out);
    const names = new Set([...this.counters.keys()].map((k) => k.slice(0, k.indexOf('{'))));
    for (const name of names) {
      out.push(`# TYPE ${name} counter`);
      for (const [k, v] of this.counters) if (k.startsWith(`${name}{`)) out.push(`${k.replace('{}', '')} ${v}`);
    }
    for (const collect of this.collectors) out.push(...collect());
    const mem = process.memoryUsage();
    out.push('# TYPE process_resident_memory_bytes gauge', `process_resident_memory_bytes ${mem.rss}`);
    out.push('# TYPE process_uptime_seconds gauge', `process_uptime_seconds ${process.uptime().toFixed(3)}`);
    return out.join('\n') + '\n';
  }

  private renderCalls(out: string[]): void {
    const all = [...this.calls.values()].flatMap((m) => [...m.values()]);
    out.push('# HELP agw_gateway_tokens_total Tokens of finalized gateway calls by provider, model and kind (prompt, completion, cached: the cached part of prompt).');
    out.push('# TYPE agw_gateway_tokens_total counter');
    for (const t of all) {
      out.push(`agw_gateway_tokens_total{${t.labels},kind="prompt"} ${t.prompt}`);
      out.push(`agw_gateway_tokens_total{${t.labels},kind="completion"} ${t.completion}`);
      out.push(`agw_gateway_tokens_total{${t.labels},kind="cached"} ${t.cached}`);
    }
    out.push('# HELP agw_gateway_cost_usd_total USD charged for finalized gateway calls by provider and model.');
    out.push('# TYPE agw_gateway_cost_usd_total counter');
    for (const t of all) out.push(`agw_gateway_cost_usd_total{${t.labels}} ${t.costNano / 1e9}`);
  }
}

function observe(map: Map<string, Histogram>, key: string, seconds: number): void {
  let h = map.get(key);
  if (!h) {
    h = { counts: new Array(BUCKETS.length).fill(0), sum: 0, count: 0 };
    map.set(key, h);
  }
  h.sum += seconds;
  h.count++;
  for (let i = 0; i < BUCKETS.length; i++) if (seconds <= BUCKETS[i]) h.counts[i]++;
}

function renderHistogram(out: string[], name: string, help: string, map: Map<string, Histogram>): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
  for (const [k, h] of map) {
    const sep = k ? ',' : '';
    BUCKETS.forEach((b, i) => out.push(`${name}_bucket{${k}${sep}le="${b}"} ${h.counts[i]}`));
    out.push(`${name}_bucket{${k}${sep}le="+Inf"} ${h.count}`);
    out.push(`${name}_sum{${k}} ${h.sum}`, `${name}_count{${k}} ${h.count}`);
  }
}
