import { describe, expect, it } from 'vitest';
import { htmlToMarkdown } from '../markdown/html-to-markdown.js';
import { nextFromLinkHeader } from './confluence.js';

/** A page as wiki_page_fetcher stores it: the storage-format body inside a small XHTML wrapper. */
const stored = (body: string) =>
  `<html><head><title>Runbook</title></head><body><article data-wiki-root="https://acme.atlassian.net/wiki" ` +
  `data-wiki-space="OPS" data-wiki-page-id="42"><h1>Runbook</h1>\n${body}\n</article></body></html>`;

const markdownOf = (body: string) => htmlToMarkdown(stored(body)).markdown;

describe('Confluence storage format to markdown', () => {
  it('turns the code macro into a fenced block with its language, CDATA kept verbatim', () => {
    const markdown = markdownOf(
      '<ac:structured-macro ac:name="code"><ac:parameter ac:name="language">python</ac:parameter>' +
        '<ac:plain-text-body><![CDATA[if a < b && c > d:\n    print("<ok>")]]></ac:plain-text-body></ac:structured-macro>',
    );
    expect(markdown).toContain('```python\nif a < b && c > d:\n    print("<ok>")\n```');
  });

  it('renders panels as quotes with their kind and title, and keeps an expand body', () => {
    const markdown = markdownOf(
      '<ac:structured-macro ac:name="note"><ac:parameter ac:name="title">Before you start</ac:parameter>' +
        '<ac:rich-text-body><p>Take a backup.</p></ac:rich-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="expand"><ac:rich-text-body><p>Hidden details.</p></ac:rich-text-body></ac:structured-macro>' +
        '<ac:structured-macro ac:name="toc" />',
    );
    expect(markdown).toContain('> **Note: Before you start**\n>\n> Take a backup.');
    expect(markdown).toContain('Hidden details.');
  });

  it('links pages and attachments, shows images, tables and task lists', () => {
    const markdown = markdownOf(
      '<p><ac:link><ri:page ri:content-title="On call" ri:space-key="SRE" /><ac:plain-text-link-body><![CDATA[the rota]]></ac:plain-text-link-body></ac:link>, ' +
        '<ac:link><ri:page ri:content-title="Failover steps" /></ac:link>, ' +
        '<ac:link><ri:attachment ri:filename="Årsplan 2026.pdf" /></ac:link></p>' +
        '<p><ac:image ac:alt="topology"><ri:attachment ri:filename="net.png" /></ac:image></p>' +
        '<table><tbody><tr><th>Host</th><th>Role</th></tr><tr><td>db1</td><td>primary</td></tr></tbody></table>' +
        '<ac:task-list><ac:task><ac:task-id>1</ac:task-id><ac:task-status>incomplete</ac:task-status><ac:task-body>Page the DBA</ac:task-body></ac:task></ac:task-list>',
    );
    expect(markdown).toContain('[the rota](https://acme.atlassian.net/wiki/display/SRE/On+call)');
    expect(markdown).toContain(
      '[Failover steps](https://acme.atlassian.net/wiki/display/OPS/Failover+steps)',
    );
    expect(markdown).toContain(
      '[Årsplan 2026.pdf](https://acme.atlassian.net/wiki/download/attachments/42/%C3%85rsplan%202026.pdf)',
    );
    expect(markdown).toContain(
      '![topology](https://acme.atlassian.net/wiki/download/attachments/42/net.png)',
    );
    expect(markdown).toContain('| Host | Role |\n| --- | --- |\n| db1 | primary |');
    expect(markdown).toContain('- [ ] Page the DBA');
  });

  it('does not expand an XML entity bomb', () => {
    const entities = Array.from(
      { length: 10 },
      (_, level) => `<!ENTITY lol${level + 1} "${`&lol${level};`.repeat(10)}">`,
    ).join('');
    const bomb = `<!DOCTYPE lolz [<!ENTITY lol0 "lol">${entities}]><p>Before &lol10; after</p><ac:structured-macro ac:name="info"><ac:rich-text-body><p>x</p></ac:rich-text-body></ac:structured-macro>`;
    const markdown = markdownOf(bomb);
    expect(markdown.length).toBeLessThan(500);
    expect(markdown).toContain('Before');
  });

  it('leaves ordinary HTML to HTML parsing rules (no storage elements, no XHTML self-closing)', () => {
    // In HTML a "self-closed" <a/> still wraps what follows; parsed as XHTML it would be empty.
    expect(htmlToMarkdown('<p><a href="https://docs.test/x"/>the guide</p>').markdown).toBe(
      '[the guide](https://docs.test/x)\n',
    );
  });
});

describe('Link header', () => {
  it('finds the next page among other relations', () => {
    expect(
      nextFromLinkHeader(
        '</wiki/api/v2/spaces/1/pages?cursor=abc>; rel="next", <https://x/wiki>; rel="base"',
      ),
    ).toBe('/wiki/api/v2/spaces/1/pages?cursor=abc');
    expect(nextFromLinkHeader('<https://x/wiki>; rel="base"')).toBeUndefined();
    expect(nextFromLinkHeader(undefined)).toBeUndefined();
  });

  it('renders what a reader sees of dates, status lozenges, Jira issues and code titles (a runbook page)', () => {
    const markdown = markdownOf(
      '<p>Last reviewed <time datetime="2026-03-01" />.</p>' +
        '<table><tbody><tr><th>Secret</th><th>Status</th><th>Owner</th></tr>' +
        '<tr><td>db password</td><td><ac:structured-macro ac:name="status" ac:schema-version="1" ac:macro-id="7f3a">' +
        '<ac:parameter ac:name="colour">Green</ac:parameter><ac:parameter ac:name="title">Rotated</ac:parameter>' +
        '</ac:structured-macro></td><td>DBA</td></tr></tbody></table>' +
        '<p>Related ticket: <ac:structured-macro ac:name="jira" ac:schema-version="1" ac:macro-id="1c2d">' +
        '<ac:parameter ac:name="server">System JIRA</ac:parameter>' +
        '<ac:parameter ac:name="serverId">146d9a9e-4c5e-3a0b-8e1a-0e9e1f1d2c3b</ac:parameter>' +
        '<ac:parameter ac:name="key">OPS-1234</ac:parameter></ac:structured-macro> and ' +
        '<ac:link><ri:attachment ri:filename="rotation.log" /></ac:link></p>' +
        '<ac:structured-macro ac:name="code" ac:schema-version="1"><ac:parameter ac:name="title">rotate.sh</ac:parameter>' +
        '<ac:parameter ac:name="language">bash</ac:parameter>' +
        '<ac:plain-text-body><![CDATA[vault write -f database/rotate-root/main]]></ac:plain-text-body></ac:structured-macro>',
    );
    expect(markdown).toContain('Last reviewed 2026-03-01.');
    expect(markdown).toContain('| db password | [ROTATED] | DBA |');
    expect(markdown).toContain(
      'Related ticket: [OPS-1234](https://acme.atlassian.net/browse/OPS-1234) and [rotation.log](',
    );
    expect(markdown).toContain('**rotate.sh**\n\n```bash\nvault write -f database/rotate-root/main\n```');
  });

  it('links Jira issue keys from Data Center storage format, whichever parameter holds the key', () => {
    // As wiki_page_fetcher stores a Data Center page given `jira_url`. The macros are the
    // shapes Data Center pages hold: the issue dialog's (server, serverId, key), a page converted
    // from wiki markup `{jira:OPS-1235}` (the unnamed parameter), a Confluence 4 page
    // (`ac:macro` with `ac:default-parameter`), and a JQL naming one issue.
    const dataCenter = (jiraUrl: string) =>
      `<html><head><title>Runbook</title></head><body><article data-wiki-root="https://wiki.acme.example" ` +
      `data-wiki-space="OPS" data-wiki-page-id="42"${jiraUrl ? ` data-jira-url="${jiraUrl}"` : ''}><h1>Runbook</h1>\n` +
      '<p>Dialog: <ac:structured-macro ac:name="jira" ac:schema-version="1" ac:macro-id="5b1d2c3e-8f4a-4e2b-9c1d-7a6b5c4d3e2f">' +
      '<ac:parameter ac:name="server">JIRA (jira.acme.example)</ac:parameter>' +
      '<ac:parameter ac:name="serverId">b7e6a7c4-3f1e-3c2a-9d5b-2f0e1c4a6b8d</ac:parameter>' +
      '<ac:parameter ac:name="key">OPS-1234</ac:parameter></ac:structured-macro>.</p>' +
      '<p>Markup: <ac:structured-macro ac:name="jira" ac:schema-version="1">' +
      '<ac:parameter ac:name="">OPS-1235</ac:parameter></ac:structured-macro>.</p>' +
      '<p>Old page: <ac:macro ac:name="jira"><ac:default-parameter>OPS-1236</ac:default-parameter></ac:macro>.</p>' +
      '<p>Query: <ac:structured-macro ac:name="jira" ac:schema-version="1">' +
      '<ac:parameter ac:name="server">JIRA (jira.acme.example)</ac:parameter>' +
      '<ac:parameter ac:name="jqlQuery">key = OPS-1237</ac:parameter></ac:structured-macro>.</p>' +
      '<p>List: <ac:structured-macro ac:name="jira" ac:schema-version="1">' +
      '<ac:parameter ac:name="jqlQuery">project = OPS AND status = Open</ac:parameter></ac:structured-macro>.</p>' +
      '\n</article></body></html>';
    const linked = htmlToMarkdown(dataCenter('https://jira.acme.example/')).markdown;
    for (const [label, key] of [
      ['Dialog', 'OPS-1234'],
      ['Markup', 'OPS-1235'],
      ['Old page', 'OPS-1236'],
      ['Query', 'OPS-1237'],
    ])
      expect(linked).toContain(`${label}: [${key}](https://jira.acme.example/browse/${key}).`);
    expect(linked).toContain('List: Jira issues: project = OPS AND status = Open.');
    // Without jira_url the key is still there for the reader, as plain text.
    const plain = htmlToMarkdown(dataCenter('')).markdown;
    expect(plain).toContain('Markup: OPS-1235.');
    expect(plain).toContain('Old page: OPS-1236.');
  });

  it('fills rowspan and colspan cells, so the cells after them keep their columns (plain HTML too)', () => {
    const table =
      '<table><tr><th>Region</th><th>Host</th><th>Role</th></tr>' +
      '<tr><td rowspan="2">eu</td><td>db1</td><td>primary</td></tr><tr><td>db2</td><td>replica</td></tr>' +
      '<tr><td colspan="2">us (planned)</td><td>none</td></tr></table>';
    const expected =
      '| Region | Host | Role |\n| --- | --- | --- |\n| eu | db1 | primary |\n| eu | db2 | replica |\n| us (planned) | us (planned) | none |';
    expect(markdownOf(table)).toContain(expected);
    expect(htmlToMarkdown(`<html><body><main>${table}</main></body></html>`).markdown).toContain(expected);
  });
});
