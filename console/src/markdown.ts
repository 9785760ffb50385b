/**
 * Markdown from data (a chat answer, a stored object, a doc) as HTML safe to insert: marked
 * renders it, DOMPurify removes scripts, event handlers and `javascript:` URLs, then every
 * link keeps only an href `linkUrl` accepts (http(s) or a same-origin path; the fragment links
 * of the console itself too), and one leaving the console opens in a new tab without a
 * referrer. The answer of a language model or a crawled page is untrusted input.
 */
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { linkUrl } from './links.js';

let hooked = false;

function hookLinks(): void {
  if (hooked) return;
  hooked = true;
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.nodeName !== 'A') return;
    const href = node.getAttribute('href');
    if (href === null) return;
    if (href.startsWith('#')) return;
    const safe = linkUrl(href);
    if (!safe) {
      node.removeAttribute('href');
      return;
    }
    node.setAttribute('href', safe);
    node.setAttribute('target', '_blank');
    node.setAttribute('rel', 'noreferrer');
  });
}

export function markdownHtml(text: string): string {
  hookLinks();
  return DOMPurify.sanitize(marked.parse(text, { async: false }) as string);
}
