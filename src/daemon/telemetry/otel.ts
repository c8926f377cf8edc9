import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ResolvedConfig } from '../../shared/config/resolve.js';
import { nanoToUsd } from '../../shared/money.js';
import type { Booking } from '../money/bookings.js';
import type { Reservation } from '../money/calls.js';
import { tracesUrl, type CallSpan, type Telemetry } from './index.js';

/**
 * The OpenTelemetry side (loaded only when telemetry is on, see index.ts): a tracer
 * provider of its own (nothing registered globally), spans batched to an OTLP/HTTP
 * exporter (JSON). Span names and attributes follow the GenAI semantic conventions
 * (`{gen_ai.operation.name} {gen_ai.request.model}`, kind CLIENT); agw adds the cost, the
 * alias and the request id. The caller's traceparent is the span's parent; a call
 * without one starts a trace.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/** gen_ai.provider.name's well-known values where agw's provider id differs. */
const PROVIDER_NAMES: Record<string, string> = {
  google: 'gcp.gemini',
  mistral: 'mistral_ai',
  xai: 'x_ai',
};

function parentContext(traceparent: string | undefined) {
  const m = traceparent ? TRACEPARENT.exec(traceparent.trim().toLowerCase()) : null;
  if (!m || m[1] === 'ff' || /^0+$/.test(m[2]) || /^0+$/.test(m[3])) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, { traceId: m[2], spanId: m[3], traceFlags: parseInt(m[4], 16) & 1, isRemote: true });
}

function operationOf(r: Reservation): string {
  if (r.usageType !== 'ai_chat') return 'generate_content';
  return r.model && /embed/i.test(r.model) ? 'embeddings' : 'chat';
}

class OtelCallSpan implements CallSpan {
  readonly traceparent: string;

  constructor(private readonly span: Span) {
    const c = span.spanContext();
    this.traceparent = `00-${c.traceId}-${c.spanId}-${(c.traceFlags & 1).toString(16).padStart(2, '0')}`;
  }

  end(b: Booking): void {
    const attrs: Attributes = {
      'gen_ai.provider.name': PROVIDER_NAMES[b.providerId] ?? b.providerId,
      'gen_ai.response.model': b.model ?? undefined,
      'gen_ai.usage.input_tokens': b.promptTokens,
      'gen_ai.usage.output_tokens': b.completionTokens,
      'http.response.status_code': b.answerStatus,
      'agw.request_id': b.id,
      'agw.endpoint': b.endpoint,
      'agw.cost_usd': nanoToUsd(b.customerNano),
      'agw.cached_tokens': b.cachedTokens,
      'agw.attempts': b.attempts,
      'agw.outcome': b.status,
      'agw.stream': b.stream,
    };
    if (b.alias) attrs['agw.alias'] = b.alias;
    if (b.projectId) attrs['agw.project_id'] = b.projectId;
    if (b.answerStatus >= 400) {
      attrs['error.type'] = b.errorCode ?? String(b.answerStatus);
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: b.errorCode ?? `HTTP ${b.answerStatus}` });
    }
    this.span.setAttributes(attrs);
    this.span.end();
  }
}

export function createTelemetry(config: NonNullable<ResolvedConfig['telemetry']>, version: string): Telemetry {
  const exporter = new OTLPTraceExporter({ url: tracesUrl(config.otlpEndpoint), headers: config.headers });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': config.serviceName, 'service.version': version }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  const tracer = provider.getTracer('agw', version);
  return {
    startCall(r, traceparent) {
      const operation = operationOf(r);
      const requestModel = r.alias ?? r.model ?? undefined;
      const span = tracer.startSpan(
        requestModel ? `${operation} ${requestModel}` : operation,
        {
          kind: SpanKind.CLIENT,
          startTime: r.createdAt,
          attributes: {
            'gen_ai.operation.name': operation,
            'gen_ai.provider.name': PROVIDER_NAMES[r.providerId] ?? r.providerId,
            'gen_ai.request.model': requestModel,
          },
        },
        parentContext(traceparent),
      );
      return new OtelCallSpan(span);
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
