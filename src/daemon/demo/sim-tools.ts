// What both simulated upstreams share to speak tools: which tool to call, its arguments
// (built from the tool's JSON Schema), the argument fragments of a streamed call and the
// text that answers a tool result. Each sim reads its own wire format around these.
//
// The rule, the same in both formats (so an agent loop runs offline, whatever format the
// gateway translates to):
// - the last turn is a tool result (OpenAI: a `tool` message; Anthropic: a user turn with a
//   `tool_result` block) → a text answer quoting it, `The tool said: …`;
// - otherwise, with function tools and `tool_choice` not `none`, one call, with the least
//   arguments the tool's schema accepts, to: the tool `tool_choice` names; else the first tool
//   the user's last message names ("What is the weather in Paris?" names `get_weather`);
//   else, when a call is required (`required` / `any`), the first tool;
// - otherwise today's echo.
// A tool is called only when it is asked for (named, or a call required), as a model would,
// and only the user's own words name it or give its arguments: what a client wraps in tags
// is context (Claude Code's `<system-reminder>`, `<task-notification>`, which list its
// tools). Calling the first tool of every request sent Claude Code, whose first tool starts
// a subagent, into 270 calls for one prompt (each subagent again starting one).

/** A function tool as both formats declare it: its name and the JSON Schema of its input. */
export interface SimTool {
  name: string;
  schema: unknown;
}

/** One call the sim makes: the tool's name and its arguments as JSON text. */
export interface SimCall {
  name: string;
  arguments: string;
}

/** A call, or a 400 naming what is wrong with the request (`tool_choice` naming no tool). */
export type CallPlan = { call: SimCall } | { error: string };

/** What `tool_choice` asks: a tool by name, or some call (`required` / `any`). */
export interface SimToolChoice {
  name?: string;
  required: boolean;
}

/** At most this many characters of a tool result are quoted (as the echo keeps 200). */
const QUOTE_CHARS = 200;
/** Characters per streamed argument fragment: a short call still comes in several pieces. */
const FRAGMENT_CHARS = 6;
const MAX_DEPTH = 6;

/** Text answer for the tool results the request ends with. */
export function toolSaid(results: string[]): string {
  return `The tool said: ${results.join('; ').slice(0, QUOTE_CHARS)}`;
}

/**
 * The short string every required string property gets: the last word of the user's text
 * ("What is the weather in Paris?" → "Paris"), at most 40 characters; "demo" when there is none.
 */
export function shortValue(userText: string): string {
  const words = userText.match(/[\p{L}\p{N}/~][\p{L}\p{N}._/~-]*/gu) ?? [];
  for (let i = words.length - 1; i >= 0; i--) {
    const w = words[i].replace(/[._/-]+$/u, '');
    if (/[\p{L}\p{N}]/u.test(w)) return w.slice(0, 40);
  }
  return 'demo';
}

/**
 * Whether `text` names the tool: its whole name, or a part of it of 4 letters or more
 * (split at `_`, `-`, `.` and lower-to-upper case), as a word, case-insensitively:
 * "weather" names `get_weather`, "read" names `Read`, "edit" names `NotebookEdit`.
 */
export function names(text: string, tool: string): boolean {
  const words = new Set(text.toLowerCase().split(/[^\p{L}\p{N}_]+/u));
  if (words.has(tool.toLowerCase())) return true;
  const parts = tool.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').toLowerCase().split(/[\s_.-]+/u);
  return parts.some((p) => p.length >= 4 && words.has(p));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The least value `schema` accepts, deterministically: `const`, else the first `enum` value,
 * else the first `anyOf` / `oneOf` branch, else by type: strings `word`, numbers and integers
 * 1, booleans true, null, arrays of `minItems` items, objects with their required properties.
 */
export function valueFor(schema: unknown, word: string, depth = 0): unknown {
  if (!isObject(schema) || depth > MAX_DEPTH) return word;
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const branches = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (branches && branches.length > 0) {
    const pick = branches.find((b) => !(isObject(b) && b.type === 'null')) ?? branches[0];
    return valueFor(pick, word, depth + 1);
  }
  let type = schema.type;
  if (Array.isArray(type)) type = type.find((t) => t !== 'null') ?? type[0];
  if (type === undefined && isObject(schema.properties)) type = 'object';
  switch (type) {
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    case 'array': {
      const n = typeof schema.minItems === 'number' ? Math.min(schema.minItems, 3) : 0;
      return Array.from({ length: n }, () => valueFor(schema.items, word, depth + 1));
    }
    case 'object':
      return objectFor(schema, word, depth);
    default:
      return word;
  }
}

function objectFor(schema: Record<string, unknown>, word: string, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const props = isObject(schema.properties) ? schema.properties : {};
  if (!Array.isArray(schema.required)) return out;
  for (const name of schema.required) {
    if (typeof name === 'string') out[name] = valueFor(props[name], word, depth + 1);
  }
  return out;
}

/**
 * The call for a request that carries `tools` (undefined: answer text): the tool `choice`
 * names (a 400 when no tool has that name, as both APIs refuse it), else the first tool
 * `userText` names, else the first tool when a call is required. Arguments: valueFor(schema).
 */
export function planCall(tools: SimTool[], choice: SimToolChoice, userText: string): CallPlan | undefined {
  const words = ownWords(userText);
  let tool: SimTool | undefined;
  if (choice.name !== undefined) {
    tool = tools.find((t) => t.name === choice.name);
    if (!tool) return { error: `tool_choice names a tool that is not in tools: ${choice.name}` };
  } else {
    tool = tools.find((t) => names(words, t.name)) ?? (choice.required ? tools[0] : undefined);
    if (!tool) return undefined;
  }
  const args = valueFor(isObject(tool.schema) ? tool.schema : { type: 'object' }, shortValue(words));
  return { call: { name: tool.name, arguments: JSON.stringify(isObject(args) ? args : {}) } };
}

/** The user's own words: `text` without the `<tag …>…</tag>` sections a client adds. */
export function ownWords(text: string): string {
  return text.includes('<') ? text.replace(/<([A-Za-z][\w-]*)(?:\s[^>]*)?>[\s\S]*?<\/\1>/g, ' ') : text;
}

/** Output tokens of a call: ceil((name + arguments) / 4), the text formula of sim-core.ts. */
export function callText(call: SimCall): string {
  return call.name + call.arguments;
}

/** The arguments' JSON in FRAGMENT_CHARS-long pieces, in order; they concatenate back to it. */
export function argumentFragments(json: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < json.length; i += FRAGMENT_CHARS) out.push(json.slice(i, i + FRAGMENT_CHARS));
  return out;
}
