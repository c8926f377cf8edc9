import type { ChatApi } from '../../../shared/providers/index.js';
import { budgetOf, drop, type NeutralRequest } from './neutral.js';

type Obj = Record<string, unknown>;

/**
 * Extended thinking for a messages-format call, when it can be honoured: the model thinks,
 * no tool use is forced, the budget (≥ 1,024) fits under max_tokens, and the turn being
 * continued after a tool call carries its signed thinking (the API requires it back).
 * Sampling settings thinking does not allow (temperature, top_k, top_p below 0.95) are dropped.
 */
export function thinking(req: NeutralRequest, b: Obj, model: string, api: ChatApi, dropped: string[]): void {
  const r = req.reasoning;
  if (!r || r.effort === 'none') return;
  const budget = budgetOf(r) ?? budgetOf({ effort: 'medium' })!;
  const maxTokens = b.max_tokens as number;
  const lastAssistant = [...req.turns].reverse().find((t) => t.role === 'assistant');
  const continuesToolCall = lastAssistant?.parts.some((p) => p.type === 'tool_call') && !lastAssistant.parts.some((p) => p.type === 'thinking' && (p.signature || p.redacted));
  const forced = req.toolChoice === 'required' || typeof req.toolChoice === 'object';
  const fitted = Math.min(Math.max(budget, 1024), maxTokens - 1);
  if (!(api.reasoningModels?.test(model) ?? false) || forced || continuesToolCall || fitted < 1024) {
    drop(dropped, 'reasoning_effort'); // the caller's own name: NeutralRequest.callerNames
    return;
  }
  b.thinking = { type: 'enabled', budget_tokens: fitted };
  for (const k of ['temperature', 'top_k'] as const) {
    if (b[k] !== undefined) {
      delete b[k];
      drop(dropped, k);
    }
  }
  if (typeof b.top_p === 'number' && b.top_p < 0.95) {
    delete b.top_p;
    drop(dropped, 'top_p');
  }
}
