/**
 * Main-content extraction on a parsed (htmlparser2/domhandler) document: boilerplate is
 * dropped by tag, ARIA role and class/id words, then the content root is `<main>`,
 * `<article>` or `role=main` when the page has one, else found by text density: from
 * `<body>`, descend while a single child holds most of the non-link text.
 */
import type { ChildNode, Document, Element } from 'domhandler';

/** Elements that are never content. */
const droppedTags = new Set([
  'script',
  'style',
  'noscript',
  'template',
  'nav',
  'header',
  'footer',
  'aside',
  'form',
  'button',
  'input',
  'select',
  'textarea',
  'iframe',
  'svg',
  'canvas',
  'object',
  'embed',
  'dialog',
  'menu',
]);

const droppedRoles = new Set([
  'navigation',
  'banner',
  'contentinfo',
  'complementary',
  'search',
  'menu',
  'menubar',
  'dialog',
  'alertdialog',
]);

/**
 * Class or id words of boilerplate blocks (navigation bars, cookie banners, sidebars).
 * Matched as whole words of the attribute, split on spaces, `-` and `_`.
 */
const boilerplateWords =
  /(?:^|[\s_-])(?:nav|navbar|navigation|navheader|navfooter|breadcrumbs?|sidebar|site-header|site-footer|footer|cookies?|cookie-banner|consent|gdpr|skip-link|skiplink|advert|advertisement|social|share-buttons|popup|modal)(?:$|[\s_-])/i;

/** A candidate content root needs this much of its parent's text to be descended into. */
const dominantShare = 0.8;

export function isBoilerplate(element: Element): boolean {
  if (droppedTags.has(element.name)) return element.name !== 'header' || !holdsTitle(element);
  const attributes = element.attribs;
  const role = attributes.role;
  if (role && droppedRoles.has(role.toLowerCase())) return true;
  if (attributes.hidden !== undefined || attributes['aria-hidden'] === 'true') return true;
  // Asked of every element several times per page: no string built for one without either.
  const classes = attributes.class;
  const id = attributes.id;
  if (!classes && !id) return false;
  return boilerplateWords.test(`${classes ?? ''} ${id ?? ''}`);
}

/** A `<header>` carrying the article's heading is content (blogs put the h1 there). */
function holdsTitle(header: Element): boolean {
  return findFirst(header.children, (element) => /^h[1-3]$/.test(element.name)) !== undefined;
}

function isElement(node: ChildNode): node is Element {
  return node.type === 'tag' || node.type === 'script' || node.type === 'style';
}

/** Finds the first element matching `test`, breadth-first (no recursion: depth is unbounded). */
function findFirst(roots: readonly ChildNode[], test: (element: Element) => boolean): Element | undefined {
  return findFirstOfEach(roots, [test])[0];
}

/**
 * For each test, the first element matching it, breadth-first, in one walk: the same elements
 * findFirst finds test by test (the walk, and where boilerplate prunes it, do not depend on the
 * test), where a page without `<main>` was walked whole three times. The walk ends once the
 * first test has matched: what it finds decides, whatever the others found.
 */
function findFirstOfEach(
  roots: readonly ChildNode[],
  tests: readonly ((element: Element) => boolean)[],
): (Element | undefined)[] {
  const found: (Element | undefined)[] = tests.map(() => undefined);
  const queue: ChildNode[] = [...roots];
  for (let index = 0; index < queue.length; index++) {
    const node = queue[index] as ChildNode;
    if (!isElement(node)) continue;
    for (let position = 0; position < tests.length; position++) {
      if (found[position] === undefined && (tests[position] as (element: Element) => boolean)(node))
        found[position] = node;
    }
    if (found[0] !== undefined) return found;
    if (isBoilerplate(node)) continue;
    for (const child of node.children) queue.push(child);
  }
  return found;
}

/**
 * Non-link text length of every element under `root` (boilerplate counts 0), computed
 * bottom-up over an explicit stack so deeply nested input cannot overflow the call stack.
 */
function textWeights(root: Element): Map<Element, number> {
  const weights = new Map<Element, number>();
  const order: Element[] = [];
  const stack: Element[] = [root];
  while (stack.length > 0) {
    const element = stack.pop() as Element;
    order.push(element);
    for (const child of element.children) {
      if (isElement(child) && !isBoilerplate(child) && child.name !== 'a') stack.push(child);
    }
  }
  for (let index = order.length - 1; index >= 0; index--) {
    const element = order[index] as Element;
    let weight = 0;
    for (const child of element.children) {
      if (child.type === 'text') weight += trimmedLength(child.data);
      else if (isElement(child)) weight += weights.get(child) ?? 0;
    }
    weights.set(element, weight);
  }
  return weights;
}

/** `text.trim().length` without the trimmed copy (every text node of a page is weighed). */
function trimmedLength(text: string): number {
  let start = 0;
  let end = text.length;
  while (start < end && isTrimmed(text.charCodeAt(start))) start++;
  while (end > start && isTrimmed(text.charCodeAt(end - 1))) end--;
  return end - start;
}

/** What String.prototype.trim removes: JavaScript's white space and line terminators (\s). */
const whiteSpace = /\s/;

function isTrimmed(code: number): boolean {
  if (code === 32 || (code >= 9 && code <= 13)) return true;
  return code >= 0x80 && whiteSpace.test(String.fromCharCode(code));
}

/** The element holding the page's main content (boilerplate inside it is skipped later). */
export function findMainContent(document: Document): Element | Document {
  const [main, article, body] = findFirstOfEach(document.children, [
    (element) => element.name === 'main' || element.attribs.role === 'main',
    (element) => element.name === 'article',
    (element) => element.name === 'body',
  ]);
  const explicit = main ?? article;
  if (explicit) return explicit;
  if (!body) return document;
  const weights = textWeights(body);
  let current: Element = body;
  for (;;) {
    const total = weights.get(current) ?? 0;
    if (total === 0) return current;
    let best: Element | undefined;
    let bestWeight = 0;
    for (const child of current.children) {
      if (!isElement(child)) continue;
      const weight = weights.get(child) ?? 0;
      if (weight > bestWeight) {
        best = child;
        bestWeight = weight;
      }
    }
    // Stop at a table, list or paragraph: descending further would cut content in pieces.
    if (
      !best ||
      bestWeight < total * dominantShare ||
      !/^(div|section|main|article|body|span)$/.test(best.name)
    )
      return current;
    current = best;
  }
}
