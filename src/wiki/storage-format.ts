/**
 * Confluence storage format (XHTML with `ac:` macros and `ri:` resource identifiers) rewritten
 * in place into the plain HTML the markdown converter knows, so a wiki page becomes markdown as
 * its readers see it:
 * - the `code` macro (and `noformat`) -> `<pre data-lang>` with the CDATA body, a fenced block;
 * - `info`, `note`, `tip`, `warning` and `panel` -> a quote starting with the panel's kind and
 *   title; `expand` and other macros with a rich-text body keep that body; a code macro's
 *   `title` (a file name) is a bold line over the code; `status` -> `[ROTATED]`; `jira` -> the
 *   issue key wherever either product put it, linked to the issue (Cloud: the site's Jira;
 *   Data Center: `data-jira-url`); other macros without a body (toc,
 *   children) are dropped;
 * - `ac:link` to a page -> a link to `<wiki>/display/<space>/<title>` (Confluence resolves it on
 *   both products); to an attachment -> its download URL; `ac:image` -> an image of the
 *   attachment or URL; task lists -> `[ ]`/`[x]` items; emoticons and placeholders dropped.
 * The page's wiki root, space key and id come from the wrapper wiki_page_fetcher stores
 * (`data-wiki-root`, `data-wiki-space`, `data-wiki-page-id` on the element holding the body).
 */
import { type ChildNode, type Document, Element, type ParentNode, Text } from 'domhandler';

/** A new element whose children know it as their parent. */
function createElement(name: string, attribs: Record<string, string>, children: ChildNode[] = []): Element {
  const created = new Element(name, attribs, []);
  setChildren(created, children);
  return created;
}

/** True when `html` holds storage-format elements (parsed then with self-closing tags and CDATA). */
export function looksLikeStorageFormat(html: string): boolean {
  return /<(ac|ri):[a-z]/i.test(html);
}

interface PageContext {
  wikiRoot: string;
  spaceKey: string;
  pageId: string;
  /** The Jira a Data Center wiki's issue macros point at (wiki_page_fetcher's `jira_url`). */
  jiraUrl: string;
}

const panelKinds: Record<string, string> = {
  info: 'Info',
  note: 'Note',
  tip: 'Tip',
  warning: 'Warning',
  panel: '',
};

export function rewriteStorageFormat(document: Document): void {
  const holder = findElement(document, (element) => element.attribs['data-wiki-root'] !== undefined);
  const context: PageContext = {
    wikiRoot: (holder?.attribs['data-wiki-root'] ?? '').replace(/\/+$/, ''),
    spaceKey: holder?.attribs['data-wiki-space'] ?? '',
    pageId: holder?.attribs['data-wiki-page-id'] ?? '',
    jiraUrl: (holder?.attribs['data-jira-url'] ?? '').replace(/\/+$/, ''),
  };
  // Iterative and children first (the converter bounds nesting, and so does this walk): when a
  // node is left, its children are rewritten already, and its own list is rebuilt in one pass.
  const stack: { node: ParentNode; visited: boolean }[] = [{ node: document, visited: false }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as { node: ParentNode; visited: boolean };
    if (!top.visited) {
      top.visited = true;
      for (const child of top.node.children)
        if (child instanceof Element) stack.push({ node: child, visited: false });
      continue;
    }
    stack.pop();
    const node = top.node;
    if (!node.children.some(isStorageElement)) continue;
    setChildren(
      node,
      node.children.flatMap((child) => (isStorageElement(child) ? rewrite(child, context) : [child])),
    );
  }
}

/**
 * The parts of a construct (a macro's parameters and bodies, a link's target and text, a
 * task's status) are left for the construct to read; a stray one stays an unknown element,
 * whose content the converter keeps.
 */
const constructParts =
  /^(ac:(parameter|default-parameter|plain-text-body|rich-text-body|plain-text-link-body|link-body|task|task-id|task-status|task-body)|ri:.*)$/;

function isStorageElement(node: ChildNode): node is Element {
  return node instanceof Element && /^(ac|ri):/.test(node.name) && !constructParts.test(node.name);
}

function rewrite(element: Element, context: PageContext): ChildNode[] {
  switch (element.name) {
    case 'ac:structured-macro':
    case 'ac:macro':
      return macro(element, context);
    case 'ac:link':
      return link(element, context);
    case 'ac:image':
      return image(element, context);
    case 'ac:task-list':
      return [createElement('ul', {}, element.children.filter(isElement).map(taskItem))];
    case 'ac:layout':
    case 'ac:layout-section':
    case 'ac:layout-cell':
      return [createElement('div', {}, element.children)];
    default:
      // emoticons, placeholders, inline comment markers: their content, if any.
      return element.name === 'ac:inline-comment-marker' ? element.children : [];
  }
}

function macro(element: Element, context: PageContext): ChildNode[] {
  const name = (element.attribs['ac:name'] ?? '').toLowerCase();
  const parameters = new Map<string, string>();
  for (const child of element.children)
    if (isElement(child) && child.name === 'ac:parameter')
      parameters.set((child.attribs['ac:name'] ?? '').toLowerCase(), textOf(child).trim());
    // The unnamed parameter (`{jira:OPS-1234}` in wiki markup): `ac:default-parameter` in the
    // storage format of Confluence 4 (`ac:macro`), `ac:parameter ac:name=""` since; both ''.
    else if (isElement(child) && child.name === 'ac:default-parameter' && !parameters.has(''))
      parameters.set('', textOf(child).trim());
  const plain = element.children.find((child) => isElement(child) && child.name === 'ac:plain-text-body');
  const rich = element.children.find(
    (child): child is Element => isElement(child) && child.name === 'ac:rich-text-body',
  );
  if (name === 'code' || name === 'noformat') {
    const language = parameters.get('language') ?? '';
    const code = createElement('code', {}, [new Text(plain ? textOf(plain as Element) : '')]);
    const block = createElement('pre', language ? { 'data-lang': language } : {}, [code]);
    // The code block's title (a file name: `rotate.sh`) is a line over the code.
    const title = parameters.get('title');
    return title
      ? [createElement('p', {}, [createElement('strong', {}, [new Text(title)])]), block]
      : [block];
  }
  if (name === 'status') {
    // A coloured lozenge ("ROTATED", "IN PROGRESS"): its title in brackets, as a reader sees it.
    const title = parameters.get('title') || parameters.get('colour') || parameters.get('color');
    return title ? [new Text(`[${title.toUpperCase()}]`)] : [];
  }
  if (name === 'jira' || name === 'jiraissues') return jiraIssue(parameters, context);
  if (name in panelKinds) {
    const label = [panelKinds[name], parameters.get('title')].filter(Boolean).join(': ');
    const heading = label ? [createElement('p', {}, [createElement('strong', {}, [new Text(label)])])] : [];
    return [createElement('blockquote', {}, [...heading, ...(rich ? rich.children : [])])];
  }
  if (rich) {
    const title = parameters.get('title');
    const heading = title ? [createElement('p', {}, [createElement('strong', {}, [new Text(title)])])] : [];
    return [createElement('div', {}, [...heading, ...rich.children])];
  }
  return [];
}

/**
 * A Jira issue macro as its key, linked to the issue: on a Confluence Cloud site Jira lives at
 * the site root (`https://acme.atlassian.net/browse/OPS-1234`); a Data Center wiki names its
 * Jira by an application link id only, so the link goes to the `jira_url` wiki_page_fetcher was
 * given, and the key stays plain text without one. The key is where either product put it: the
 * `key` parameter; the unnamed parameter of a macro written as `{jira:OPS-1234}` (Data Center
 * pages converted from wiki markup, Confluence 4's `ac:default-parameter`); or a JQL naming one
 * issue (`key = OPS-1234`). A macro showing a JQL query (an issue list) is the query.
 */
function jiraIssue(parameters: Map<string, string>, context: PageContext): ChildNode[] {
  const query = parameters.get('jqlquery') || parameters.get('jql');
  const key = [parameters.get('key'), parameters.get('')]
    .map((value) => value?.trim())
    .find((value) => value !== undefined && issueKey.test(value));
  const found = key ?? (query ? singleIssueQuery.exec(query)?.[1] : undefined);
  if (found) {
    const site = /^(https:\/\/[^/]+\.atlassian\.net)\/wiki$/i.exec(context.wikiRoot)?.[1] ?? context.jiraUrl;
    return site
      ? [createElement('a', { href: `${site}/browse/${encodeURIComponent(found)}` }, [new Text(found)])]
      : [new Text(found)];
  }
  return query ? [new Text(`Jira issues: ${query}`)] : [];
}

/** A Jira issue key: the project key (a letter, then letters, digits or `_`), a dash, a number. */
const issueKey = /^[A-Z][A-Z0-9_]*-\d+$/;
/** `key = OPS-1234`, `issuekey="OPS-1234"`, `key in (OPS-1234)`: a JQL that is one issue. */
const singleIssueQuery = /^\s*(?:issue)?key\s*(?:=|in\s*\()\s*"?([A-Z][A-Z0-9_]*-\d+)"?\s*\)?\s*$/i;

function link(element: Element, context: PageContext): ChildNode[] {
  const target = element.children.find(
    (child): child is Element => isElement(child) && /^ri:/.test(child.name),
  );
  const body = element.children.find(
    (child): child is Element =>
      isElement(child) && (child.name === 'ac:plain-text-link-body' || child.name === 'ac:link-body'),
  );
  const anchor = element.attribs['ac:anchor'];
  let href = '';
  let fallback = '';
  if (target?.name === 'ri:page') {
    const title = target.attribs['ri:content-title'] ?? '';
    const space = target.attribs['ri:space-key'] || context.spaceKey;
    href = title && space && context.wikiRoot ? pageUrl(context.wikiRoot, space, title) : '';
    fallback = title;
  } else if (target?.name === 'ri:attachment') {
    const filename = target.attribs['ri:filename'] ?? '';
    href = attachmentUrl(context, filename);
    fallback = filename;
  } else if (target?.name === 'ri:url') {
    href = target.attribs['ri:value'] ?? '';
    fallback = href;
  } else if (target?.name === 'ri:user') {
    return [new Text('@user')];
  }
  if (anchor) href = `${href}#${anchor}`;
  const children = body ? body.children : [new Text(fallback || anchor || '')];
  if (body?.name === 'ac:plain-text-link-body') children.splice(0, children.length, new Text(textOf(body)));
  return href ? [createElement('a', { href }, children)] : children;
}

function image(element: Element, context: PageContext): ChildNode[] {
  const target = element.children.find(
    (child): child is Element => isElement(child) && /^ri:/.test(child.name),
  );
  let src = '';
  let alt = element.attribs['ac:alt'] ?? element.attribs['ac:title'] ?? '';
  if (target?.name === 'ri:attachment') {
    const filename = target.attribs['ri:filename'] ?? '';
    src = attachmentUrl(context, filename);
    alt ||= filename;
  } else if (target?.name === 'ri:url') {
    src = target.attribs['ri:value'] ?? '';
  }
  return src ? [createElement('img', { src, alt })] : [];
}

function taskItem(task: Element): Element {
  const status = task.children.find(
    (child): child is Element => isElement(child) && child.name === 'ac:task-status',
  );
  const body = task.children.find(
    (child): child is Element => isElement(child) && child.name === 'ac:task-body',
  );
  const done = status ? textOf(status).trim() === 'complete' : false;
  return createElement('li', {}, [new Text(done ? '[x] ' : '[ ] '), ...(body ? body.children : [])]);
}

function pageUrl(wikiRoot: string, space: string, title: string): string {
  return `${wikiRoot}/display/${encodeURIComponent(space)}/${encodeURIComponent(title).replace(/%20/g, '+')}`;
}

function attachmentUrl(context: PageContext, filename: string): string {
  if (!filename || !context.wikiRoot || !context.pageId) return '';
  return `${context.wikiRoot}/download/attachments/${encodeURIComponent(context.pageId)}/${encodeURIComponent(filename)}`;
}

function isElement(node: ChildNode): node is Element {
  return node instanceof Element;
}

function textOf(node: Element): string {
  let text = '';
  const stack: ChildNode[] = [...node.children].reverse();
  while (stack.length > 0) {
    const current = stack.pop() as ChildNode;
    if (current instanceof Text) text += current.data;
    else if ('children' in current)
      for (let i = current.children.length - 1; i >= 0; i--) stack.push(current.children[i] as ChildNode);
  }
  return text;
}

function findElement(root: ParentNode, test: (element: Element) => boolean): Element | undefined {
  const stack: ChildNode[] = [...root.children];
  while (stack.length > 0) {
    const node = stack.pop() as ChildNode;
    if (node instanceof Element) {
      if (test(node)) return node;
      stack.push(...node.children);
    }
  }
  return undefined;
}

/** Gives `parent` these children, with their parent and sibling links set. */
function setChildren(parent: ParentNode, children: ChildNode[]): void {
  parent.children = children;
  children.forEach((child, index) => {
    child.parent = parent;
    child.prev = children[index - 1] ?? null;
    child.next = children[index + 1] ?? null;
  });
}
