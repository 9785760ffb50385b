/** A page of the project's docs (docs/*.md, served at /console/docs/), a code's row highlighted. */
import { useEffect, useRef } from 'preact/hooks';
import { markdownHtml } from '../markdown.js';
import { ErrorText, html, useLoad } from '../ui.js';

export function Docs({ name, code }: { name: string; code: string | undefined }) {
  const page = useLoad(async () => {
    const response = await fetch(`/console/docs/${encodeURIComponent(name)}.md`);
    if (!response.ok) throw new Error(`docs/${name}.md: HTTP ${response.status}`);
    return markdownHtml(await response.text());
  }, [name]);
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!code || !container.current) return;
    for (const row of container.current.querySelectorAll('tr')) {
      if (row.cells[0]?.textContent?.trim() !== code) continue;
      row.classList.add('highlight');
      row.scrollIntoView({ block: 'center' });
    }
  }, [page.data, code]);
  return html`<section>
    <p class="muted">docs/${name}.md</p>
    <${ErrorText} error=${page.error} />
    <div class="markdown" ref=${container} dangerouslySetInnerHTML=${{ __html: page.data ?? '' }}></div>
  </section>`;
}
