/**
 * YAML text -> document, keeping positions so findings can name a line and column.
 * Parsing is bounded: aliases are capped (no "billion laughs"), duplicate keys are an error,
 * and only the plain YAML core schema is used (no custom tags that run code).
 */
import { createHash } from 'node:crypto';
import {
  type Document,
  isMap,
  isNode,
  isScalar,
  isSeq,
  Lexer,
  LineCounter,
  parseDocument,
  visit,
} from 'yaml';

export interface YamlProblem {
  message: string;
  line: number | null;
  column: number | null;
}

export type ParsedConfig =
  | {
      ok: true;
      value: unknown;
      /** Where each node starts: plain data, so it crosses from the parsing thread (parse-thread.ts). */
      positions: PositionTree | undefined;
      locate: (path: readonly (string | number)[]) => Position | undefined;
    }
  | { ok: false; problems: YamlProblem[] };

export interface Position {
  line: number;
  column: number;
}

/** A node's position and its children's, by mapping key or sequence index (as a string). */
export interface PositionTree extends Position {
  children?: Map<string, PositionTree>;
}

export const MAX_CONFIG_BYTES = 1024 * 1024;
/** Far deeper than any real config; keeps recursive validation away from the stack limit. */
export const MAX_CONFIG_DEPTH = 64;

export function parseConfigYaml(text: string): ParsedConfig {
  if (Buffer.byteLength(text, 'utf8') > MAX_CONFIG_BYTES) {
    return {
      ok: false,
      problems: [{ message: `config is larger than ${MAX_CONFIG_BYTES} bytes`, line: null, column: null }],
    };
  }
  // The YAML parser recurses once per nesting level; near the stack limit V8 can fail fatally
  // (seen: an out-of-memory abort in its regexp compiler) instead of throwing, so absurd
  // nesting is refused before the parser sees it.
  if (nestingExceeds(text, MAX_CONFIG_DEPTH)) {
    return { ok: false, problems: [{ message: tooDeep, line: null, column: null }] };
  }
  const lineCounter = new LineCounter();
  // Counted as the lexer goes, so a body of far too many nodes stops after the first ones
  // instead of being parsed whole (a 1 MiB flow list took seconds).
  const crowded = nodeTokensExceed(text, MAX_CONFIG_NODES);
  if (crowded !== undefined) {
    let line = 1;
    let lineStart = 0;
    for (
      let index = text.indexOf('\n');
      index >= 0 && index < crowded;
      index = text.indexOf('\n', index + 1)
    ) {
      line++;
      lineStart = index + 1;
    }
    return { ok: false, problems: [{ message: tooMany, line, column: crowded - lineStart + 1 }] };
  }
  let document: Document;
  try {
    // The library's own duplicate-key check compares every key with every other one of its
    // mapping: 76k keys held the event loop for a minute. checkKeysAndSize does it in one pass.
    document = parseDocument(text, { lineCounter, uniqueKeys: false, schema: 'core', prettyErrors: false });
  } catch (error) {
    return { ok: false, problems: [{ message: describeThrown(error), line: null, column: null }] };
  }
  if (document.errors.length === 0) {
    const problem = checkKeysAndSize(document);
    if (problem) {
      const position = problem.offset === undefined ? undefined : lineCounter.linePos(problem.offset);
      return {
        ok: false,
        problems: [{ message: problem.message, line: position?.line ?? null, column: position?.col ?? null }],
      };
    }
  }
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => {
        const position = error.pos ? lineCounter.linePos(error.pos[0]) : undefined;
        return {
          message: /call stack/i.test(error.message)
            ? tooDeep
            : (error.message.split('\n')[0] ?? error.message),
          line: position?.line ?? null,
          column: position?.col ?? null,
        };
      }),
    };
  }
  let value: unknown;
  try {
    // maxAliasCount bounds the expansion of anchors and aliases (entity-bomb style input).
    value = document.toJS({ maxAliasCount: 100 });
  } catch (error) {
    return { ok: false, problems: [{ message: describeThrown(error), line: null, column: null }] };
  }
  if (depthOf(value) > MAX_CONFIG_DEPTH) {
    return { ok: false, problems: [{ message: tooDeep, line: null, column: null }] };
  }
  const positions = positionTree(document.contents, lineCounter);
  return { ok: true, value, positions, locate: locator(positions) };
}

const tooDeep = `the YAML is nested more than ${MAX_CONFIG_DEPTH} levels deep`;

/** Nodes (scalars, mappings, sequences, pairs' keys included) a config may have. */
export const MAX_CONFIG_NODES = 100_000;

const tooMany = `the YAML has more than ${MAX_CONFIG_NODES} nodes`;

/**
 * The offset at which the lexer's tokens show more than `limit` nodes, or undefined. Counted:
 * scalars (plain, quoted, block), aliases, flow collections and block sequence items, each at
 * least one node of the composed document, so nothing under the limit is refused here; the
 * exact count is taken again after composing (checkKeysAndSize).
 */
export function nodeTokensExceed(text: string, limit: number): number | undefined {
  let nodes = 0;
  let offset = 0;
  for (const token of new Lexer().lex(text)) {
    const first = token[0];
    // The lexer's own markers (document, scalar, flow-error) are not source text.
    if (token === '\x02' || token === '\x18') continue;
    if (token === '\x1f') {
      nodes++;
    } else {
      if (first === '"' || first === "'" || first === '*' || first === '[' || first === '{') nodes++;
      else if (token === '-') nodes++;
      offset += token.length;
    }
    if (nodes > limit) return offset;
  }
  return undefined;
}

/** Positions of `node` and everything under it; recursion is safe, nesting was checked before. */
function positionTree(node: unknown, lineCounter: LineCounter): PositionTree | undefined {
  if (!isNode(node) || !node.range) return undefined;
  const position = lineCounter.linePos(node.range[0]);
  const tree: PositionTree = { line: position.line, column: position.col };
  const children = new Map<string, PositionTree>();
  if (isMap(node)) {
    for (const pair of node.items) {
      const key = isScalar(pair.key) ? String(pair.key.value) : String(pair.key);
      const child = positionTree(pair.value, lineCounter) ?? positionTree(pair.key, lineCounter);
      if (child && !children.has(key)) children.set(key, child);
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => {
      const child = positionTree(item, lineCounter);
      if (child) children.set(String(index), child);
    });
  }
  if (children.size > 0) tree.children = children;
  return tree;
}

/** Finds a path in `positions`; a missing node is located at its nearest parent. */
export function locator(
  positions: PositionTree | undefined,
): (path: readonly (string | number)[]) => Position | undefined {
  return (path) => {
    let node = positions;
    for (const segment of path) {
      const child = node?.children?.get(String(segment));
      if (!child) break;
      node = child;
    }
    return node ? { line: node.line, column: node.column } : undefined;
  };
}

/**
 * The first duplicate key of any mapping, or too many nodes: one walk, a set of keys per
 * mapping, so the time grows with the size of the document and no faster.
 */
function checkKeysAndSize(document: Document): { message: string; offset: number | undefined } | undefined {
  let nodes = 0;
  let found: { message: string; offset: number | undefined } | undefined;
  visit(document, {
    Node(_key, node) {
      nodes++;
      if (nodes > MAX_CONFIG_NODES) {
        found = { message: tooMany, offset: undefined };
        return visit.BREAK;
      }
      if (!isMap(node)) return undefined;
      const keys = new Set<string>();
      for (const pair of node.items) {
        // As the YAML library compares scalar keys: by value and type (1 and "1" differ).
        const key = isScalar(pair.key)
          ? `${typeof pair.key.value}:${String(pair.key.value)}`
          : String(pair.key);
        if (keys.has(key)) {
          const range = isNode(pair.key) ? pair.key.range : undefined;
          found = { message: 'Map keys must be unique', offset: range?.[0] };
          return visit.BREAK;
        }
        keys.add(key);
      }
      return undefined;
    },
  });
  return found;
}

function describeThrown(error: unknown): string {
  // The parser recurses per nesting level: absurd nesting ends in a stack overflow.
  if (error instanceof RangeError && /call stack/i.test(error.message)) return tooDeep;
  return (error as Error).message;
}

/**
 * A cheap over-estimate of YAML nesting, line by line: open flow brackets (outside quotes and
 * comments), block indentation (two spaces a level) and chained `- ` items. True when any of
 * them passes `limit`; a real config stays far below.
 */
export function nestingExceeds(text: string, limit: number): boolean {
  let flowDepth = 0;
  for (const line of text.split('\n')) {
    const indent = line.length - line.trimStart().length;
    let chained = 0;
    let rest = line.trimStart();
    while (rest.startsWith('- ') || rest.startsWith('? ')) {
      chained++;
      rest = rest.slice(2).trimStart();
    }
    if (indent / 2 + chained > limit * 2) return true;
    let quote: string | undefined;
    for (let index = 0; index < line.length; index++) {
      const character = line[index];
      if (quote) {
        if (character === quote) quote = undefined;
      } else if (character === '"' || character === "'") {
        quote = character;
      } else if (character === '#' && (index === 0 || /\s/.test(line[index - 1] as string))) {
        break;
      } else if (character === '[' || character === '{') {
        if (++flowDepth > limit) return true;
      } else if (character === ']' || character === '}') {
        flowDepth = Math.max(0, flowDepth - 1);
      }
    }
  }
  return false;
}

/** Nesting depth of plain data, without recursion (so it cannot overflow itself). */
function depthOf(value: unknown): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 1]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_CONFIG_DEPTH) return deepest;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** SHA-256 of the config text exactly as stored (spec 2.4 config_hash). */
export function hashConfig(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
