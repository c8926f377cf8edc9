/**
 * GENERATED from @pydantic/genai-prices 0.1.8 (MIT, https://github.com/pydantic/genai-prices):
 * do not edit; `npm run prices:sync` rewrites it from the installed package. The prices of
 * the catalog's LLM models in agw's shape (USD per 1M tokens; a price with `from` is in
 * force from that date on; time-of-day discounts taken at their dearest). The provider
 * modules take their prices from here (prices.ts); `agw admin prices diff` shows where the
 * config differs.
 */
import type { DataModel } from './types.js';

export const GENAI_PRICES_VERSION = "0.1.8";

export const GENAI_PRICES: Readonly<Record<string, DataModel>> = {
  "openai/gpt-4.1-nano": {"id":"gpt-4.1-nano","contextTokens":1000000,"prices":[{"inputPer1M":0.1,"cachedInputPer1M":0.025,"outputPer1M":0.4}]},
  "openai/gpt-4o-mini": {"id":"gpt-4o-mini","contextTokens":128000,"prices":[{"inputPer1M":0.15,"cachedInputPer1M":0.075,"outputPer1M":0.6}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "openai/gpt-4.1-mini": {"id":"gpt-4.1-mini","contextTokens":1000000,"prices":[{"inputPer1M":0.4,"cachedInputPer1M":0.1,"outputPer1M":1.6}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "openai/gpt-4.1": {"id":"gpt-4.1","contextTokens":1000000,"prices":[{"inputPer1M":2,"cachedInputPer1M":0.5,"outputPer1M":8}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "openai/gpt-4o": {"id":"gpt-4o","contextTokens":128000,"prices":[{"inputPer1M":2.5,"cachedInputPer1M":1.25,"outputPer1M":10}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "openai/o3": {"id":"o3","contextTokens":200000,"prices":[{"inputPer1M":10,"cachedInputPer1M":0.5,"outputPer1M":40},{"from":"2025-06-10","inputPer1M":2,"cachedInputPer1M":0.5,"outputPer1M":8}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "anthropic/claude-3-5-haiku-latest": {"id":"claude-3-5-haiku-latest","contextTokens":200000,"prices":[{"inputPer1M":0.8,"cacheWritePer1M":1,"cachedInputPer1M":0.08,"outputPer1M":4,"cacheWrite1hPer1M":1.6}],"unpriced":["web_searches_kcount"]},
  "anthropic/claude-haiku-4-5": {"id":"claude-haiku-4-5","contextTokens":200000,"prices":[{"inputPer1M":1,"cacheWritePer1M":1.25,"cachedInputPer1M":0.1,"outputPer1M":5,"cacheWrite1hPer1M":2}],"unpriced":["web_searches_kcount"]},
  "anthropic/claude-sonnet-4-5": {"id":"claude-sonnet-4-5","contextTokens":200000,"prices":[{"inputPer1M":3,"cacheWritePer1M":3.75,"cachedInputPer1M":0.3,"outputPer1M":15,"cacheWrite1hPer1M":6,"tiers":[{"aboveInputTokens":200000,"inputPer1M":6,"cacheWritePer1M":7.5,"cachedInputPer1M":0.6,"outputPer1M":22.5,"cacheWrite1hPer1M":12}]}],"unpriced":["web_searches_kcount"]},
  "anthropic/claude-opus-4-1": {"id":"claude-opus-4-1","contextTokens":200000,"prices":[{"inputPer1M":15,"cacheWritePer1M":18.75,"cachedInputPer1M":1.5,"outputPer1M":75,"cacheWrite1hPer1M":30}],"unpriced":["web_searches_kcount"]},
  "google/gemini-2.5-flash-lite": {"id":"gemini-2.5-flash-lite","contextTokens":1000000,"prices":[{"inputPer1M":0.1,"cachedInputPer1M":0.01,"outputPer1M":0.4}],"unpriced":["cache_audio_read_mtok","input_audio_mtok"]},
  "google/gemini-2.5-flash": {"id":"gemini-2.5-flash","contextTokens":1048576,"prices":[{"inputPer1M":0.3,"cachedInputPer1M":0.03,"outputPer1M":2.5}],"unpriced":["cache_audio_read_mtok","input_audio_mtok"]},
  "google/gemini-2.5-pro": {"id":"gemini-2.5-pro","prices":[{"inputPer1M":1.25,"cachedInputPer1M":0.125,"outputPer1M":10,"tiers":[{"aboveInputTokens":200000,"inputPer1M":2.5,"cachedInputPer1M":0.25,"outputPer1M":15}]}]},
  "groq/llama-3.1-8b-instant": {"id":"llama-3.1-8b-instant","prices":[{"inputPer1M":0.05,"outputPer1M":0.08}]},
  "groq/llama-3.3-70b-versatile": {"id":"llama-3.3-70b-versatile","prices":[{"inputPer1M":0.59,"outputPer1M":0.79}]},
  "mistral/mistral-small-latest": {"id":"mistral-small-latest","prices":[{"inputPer1M":0.1,"outputPer1M":0.3}]},
  "mistral/mistral-medium-latest": {"id":"mistral-medium-latest","prices":[{"inputPer1M":0.4,"cachedInputPer1M":0.04,"outputPer1M":2},{"from":"2026-06-16","inputPer1M":1.5,"cachedInputPer1M":0.15,"outputPer1M":7.5}]},
  "mistral/mistral-large-latest": {"id":"mistral-large","prices":[{"inputPer1M":2,"outputPer1M":6}]},
  "deepseek/deepseek-chat": {"id":"deepseek-chat","contextTokens":64000,"prices":[{"inputPer1M":0.27,"cachedInputPer1M":0.07,"outputPer1M":1.1}]},
  "deepseek/deepseek-reasoner": {"id":"deepseek-reasoner","contextTokens":64000,"prices":[{"inputPer1M":0.55,"cachedInputPer1M":0.14,"outputPer1M":2.19}]},
  "xai/grok-3-mini": {"id":"grok-3-mini","contextTokens":131072,"prices":[{"inputPer1M":0.3,"cachedInputPer1M":0.075,"outputPer1M":0.5}]},
  "xai/grok-4": {"id":"grok-4-0709","contextTokens":256000,"prices":[{"inputPer1M":3,"cachedInputPer1M":0.75,"outputPer1M":15}]},
  "together/meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo": {"id":"meta-llama/Meta-Llama-3.1-8B-Instruct-Turbo","prices":[{"inputPer1M":0.18,"outputPer1M":0.18}]},
  "together/meta-llama/Llama-3.3-70B-Instruct-Turbo": {"id":"meta-llama/Llama-3.3-70B-Instruct-Turbo","prices":[{"inputPer1M":0.88,"outputPer1M":0.88}]},
  "together/meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo": {"id":"meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo","prices":[{"inputPer1M":3.5,"outputPer1M":3.5}]},
  "cohere/command-r7b-12-2024": {"id":"command-r7b","prices":[{"inputPer1M":0.0375,"outputPer1M":0.15}]},
  "cohere/command-r": {"id":"command-r","prices":[{"inputPer1M":0.15,"outputPer1M":0.6}]},
  "cohere/command-r-plus": {"id":"command-r-plus","prices":[{"inputPer1M":2.5,"outputPer1M":10}]},
  "cohere/command-a-03-2025": {"id":"command-a","prices":[{"inputPer1M":2.5,"outputPer1M":10}]},
  "azure-openai/gpt-4.1-nano": {"id":"gpt-4.1-nano","contextTokens":1000000,"prices":[{"inputPer1M":0.1,"cachedInputPer1M":0.025,"outputPer1M":0.4}]},
  "azure-openai/gpt-4o-mini": {"id":"gpt-4o-mini","contextTokens":128000,"prices":[{"inputPer1M":0.15,"cachedInputPer1M":0.075,"outputPer1M":0.6}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "azure-openai/gpt-4.1-mini": {"id":"gpt-4.1-mini","contextTokens":1000000,"prices":[{"inputPer1M":0.4,"cachedInputPer1M":0.1,"outputPer1M":1.6}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "azure-openai/gpt-4.1": {"id":"gpt-4.1","contextTokens":1000000,"prices":[{"inputPer1M":2,"cachedInputPer1M":0.5,"outputPer1M":8}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "azure-openai/gpt-4o": {"id":"gpt-4o","contextTokens":128000,"prices":[{"inputPer1M":2.5,"cachedInputPer1M":1.25,"outputPer1M":10}],"unpriced":["storage_searches_kcount","web_searches_kcount"]},
  "bedrock/amazon.nova-micro-v1:0": {"id":"amazon.nova-micro-v1:0","contextTokens":128000,"prices":[{"inputPer1M":0.035,"cachedInputPer1M":0.00875,"outputPer1M":0.14}]},
  "bedrock/amazon.nova-lite-v1:0": {"id":"amazon.nova-lite-v1:0","contextTokens":300000,"prices":[{"inputPer1M":0.06,"cachedInputPer1M":0.015,"outputPer1M":0.24}]},
  "bedrock/amazon.nova-pro-v1:0": {"id":"amazon.nova-pro-v1:0","contextTokens":300000,"prices":[{"inputPer1M":0.8,"cachedInputPer1M":0.2,"outputPer1M":3.2}]},
  "bedrock/meta.llama3-3-70b-instruct-v1:0": {"id":"meta.llama3-3-70b-instruct-v1:0","contextTokens":128000,"prices":[{"inputPer1M":0.72,"outputPer1M":0.72}]},
  "bedrock/anthropic.claude-3-5-haiku-20241022-v1:0": {"id":"regional.anthropic.claude-3-5-haiku-20241022-v1:0","contextTokens":200000,"prices":[{"inputPer1M":0.8,"cacheWritePer1M":1,"cachedInputPer1M":0.08,"outputPer1M":4}]},
  "bedrock/anthropic.claude-haiku-4-5-20251001-v1:0": {"id":"regional.anthropic.claude-haiku-4-5-20251001-v1:0","contextTokens":200000,"prices":[{"inputPer1M":1.1,"cacheWritePer1M":1.375,"cachedInputPer1M":0.11,"outputPer1M":5.5}]},
  "bedrock/global.anthropic.claude-haiku-4-5-20251001-v1:0": {"id":"global.anthropic.claude-haiku-4-5-20251001-v1:0","contextTokens":200000,"prices":[{"inputPer1M":1,"cacheWritePer1M":1.25,"cachedInputPer1M":0.1,"outputPer1M":5}]},
  "bedrock/anthropic.claude-sonnet-4-5-20250929-v1:0": {"id":"regional.anthropic.claude-sonnet-4-5-20250929-v1:0","contextTokens":200000,"prices":[{"inputPer1M":3.3,"cacheWritePer1M":4.125,"cachedInputPer1M":0.33,"outputPer1M":16.5}]},
  "bedrock/global.anthropic.claude-sonnet-4-5-20250929-v1:0": {"id":"global.anthropic.claude-sonnet-4-5-20250929-v1:0","contextTokens":200000,"prices":[{"inputPer1M":3,"cacheWritePer1M":3.75,"cachedInputPer1M":0.3,"outputPer1M":15}]},
  "vertex/gemini-2.5-flash-lite": {"id":"gemini-2.5-flash-lite","contextTokens":1000000,"prices":[{"inputPer1M":0.1,"cachedInputPer1M":0.01,"outputPer1M":0.4}],"unpriced":["cache_audio_read_mtok","input_audio_mtok"]},
  "vertex/gemini-2.5-flash": {"id":"gemini-2.5-flash","contextTokens":1048576,"prices":[{"inputPer1M":0.3,"cachedInputPer1M":0.03,"outputPer1M":2.5}],"unpriced":["cache_audio_read_mtok","input_audio_mtok"]},
  "vertex/gemini-2.5-pro": {"id":"gemini-2.5-pro","prices":[{"inputPer1M":1.25,"cachedInputPer1M":0.125,"outputPer1M":10,"tiers":[{"aboveInputTokens":200000,"inputPer1M":2.5,"cachedInputPer1M":0.25,"outputPer1M":15}]}]},
  "vertex/claude-haiku-4-5": {"id":"claude-haiku-4-5","contextTokens":200000,"prices":[{"inputPer1M":1,"cacheWritePer1M":1.25,"cachedInputPer1M":0.1,"outputPer1M":5,"cacheWrite1hPer1M":2}],"unpriced":["web_searches_kcount"]},
  "vertex/claude-sonnet-4-5": {"id":"claude-sonnet-4-5","contextTokens":200000,"prices":[{"inputPer1M":3,"cacheWritePer1M":3.75,"cachedInputPer1M":0.3,"outputPer1M":15,"tiers":[{"aboveInputTokens":200000,"inputPer1M":6,"cacheWritePer1M":7.5,"cachedInputPer1M":0.6,"outputPer1M":22.5}]}]},
};
