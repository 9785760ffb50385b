import { Value } from 'typebox/value';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startLlmServer } from '../../../test/helpers/llm-server.js';
import { collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { llmTranslator } from './llm-translator.js';
import { chunk, protect, restore } from './markdown-protection.js';

const llm = await startLlmServer();
// The scripted "model": answers each request with a function of the markdown it was sent
// (the server reads `answer` after recording the request).
let translate: (text: string) => string = (text) => text;
Object.defineProperty(llm, 'answer', {
  get: () => translate(llm.requests.at(-1)?.body.messages.at(-1)?.content ?? ''),
  set: () => {},
});
const kit = await createAdapterTestKit({
  settings: {
    llm_profiles: [
      { name: 'extractive', provider: 'extractive', timeout_ms: 60_000 },
      {
        name: 'translator',
        provider: 'openai',
        base_url: llm.baseUrl,
        model: 'mt-model',
        timeout_ms: 60_000,
      },
    ],
  },
});
afterAll(async () => {
  await kit.close();
  await llm.close();
});
beforeEach(() => {
  llm.behaviour = 'answer';
  llm.requests = [];
  translate = (text) => text.toUpperCase();
});

const configOf = (config: Record<string, unknown>) =>
  Value.Default(llmTranslator.config, structuredClone(config)) as never;
const document = {
  source_key: 'https://example.no/guide',
  url: 'https://example.no/guide',
  title: 'Guide',
  language: 'english',
};
const markdown = [
  '# Install guide',
  '',
  'Run `npm install weir` and read [the docs](https://example.no/docs "Docs") or https://example.no/faq.',
  '',
  '```sh',
  'npm start # keep this',
  '```',
  '',
  '## Next steps',
  '',
  '- Open ![the logo](img/logo.png) and [ref][1].',
  '',
  '[1]: https://example.no/ref',
].join('\n');

describe('llm_translator', () => {
  const run = async (payload: Record<string, unknown>, config: Record<string, unknown> = {}) => {
    const handler = llmTranslator.create(
      configOf({ llm_profile: 'translator', target_language: 'nb', ...config }),
      kit.resources,
    );
    return collectOutputs(await handler(payload, kit.context({ metadata: { document } })));
  };

  it('translates the text and keeps code, link targets, URLs and the structure', async () => {
    const [output] = await run({
      markdown,
      front_matter: { title: 'Install guide', url: document.url, language: 'en' },
    });
    expect(output?.payload).toEqual({
      markdown: [
        '# INSTALL GUIDE',
        '',
        'RUN `npm install weir` AND READ [THE DOCS](https://example.no/docs "Docs") OR https://example.no/faq.',
        '',
        '```sh',
        'npm start # keep this',
        '```',
        '',
        '## NEXT STEPS',
        '',
        '- OPEN ![THE LOGO](img/logo.png) AND [REF][1].',
        '',
        '[1]: https://example.no/ref',
      ].join('\n'),
      front_matter: { title: 'Install guide', url: document.url, language: 'nb' },
    });
    expect(output?.metadata).toEqual({
      document: { ...document, language: 'norwegian' },
      translation: { target_language: 'nb', model: 'mt-model', chunks: 1 },
    });
    const [request] = llm.requests;
    expect(request?.body.model).toBe('mt-model');
    expect(request?.body.messages[0]?.content).toContain('into Norwegian Bokmål (nb)');
    expect(request?.body.messages[1]?.content).not.toMatch(/npm|example\.no|logo\.png/);
  });

  it('sends chunks under chunk_chars cut at blank lines, and skips chunks without words', async () => {
    const paragraphs = Array.from(
      { length: 6 },
      (_, index) => `Paragraph ${index} ${'word '.repeat(25).trim()}.`,
    );
    const code = `\`\`\`\n${'x = 1\n'.repeat(60)}\`\`\``;
    const source = [paragraphs.slice(0, 3).join('\n\n'), code, paragraphs.slice(3).join('\n\n')].join('\n\n');
    const [output] = await run({ markdown: source }, { chunk_chars: 300, target_language: 'de' });
    const sent = llm.requests.map((request) => request.body.messages[1]?.content ?? '');
    expect(sent.length).toBeGreaterThan(2);
    for (const text of sent) expect(text.length).toBeLessThanOrEqual(300);
    expect(sent.join('\n')).not.toContain('x = 1');
    expect(output?.payload.markdown).toBe(
      [
        paragraphs.slice(0, 3).join('\n\n').toUpperCase(),
        code,
        paragraphs.slice(3).join('\n\n').toUpperCase(),
      ].join('\n\n'),
    );
    expect(output?.payload.front_matter).toEqual({ language: 'de' });
    expect(output?.metadata).toMatchObject({
      document: { language: 'german' },
      translation: { chunks: sent.length },
    });
    llm.requests = [];
    const [codeOnly] = await run({ markdown: code }); // no words: nothing to send
    expect(llm.requests).toHaveLength(0);
    expect(codeOnly?.payload.markdown).toBe(code);
  });

  it('accepts an answer wrapped in a markdown fence', async () => {
    translate = (text) => `\`\`\`markdown\n${text.toUpperCase()}\n\`\`\``;
    const [output] = await run({ markdown: '# Hello\n\nWorld `code`.' });
    expect(output?.payload.markdown).toBe('# HELLO\n\nWORLD `code`.');
  });

  it('fails clearly when the model breaks headings or drops protected parts', async () => {
    translate = (text) => text.replace(/^## /m, '').toUpperCase();
    await expect(run({ markdown })).rejects.toThrow(
      /^llm_translator: the model broke the markdown structure of chunk 1 of 1: expected 2 headings, got 1; answer "# INSTALL/,
    );
    translate = (text) => text.replace('⟦0⟧', 'npm').toUpperCase();
    await expect(run({ markdown })).rejects.toThrow(/protected code or links ⟦0⟧ are missing/);
    translate = (text) => `${text} ⟦1⟧`;
    await expect(run({ markdown })).rejects.toThrow(/protected code or links were repeated or invented/);
  });

  it('fails a message when the model fails or the payload has no markdown', async () => {
    llm.behaviour = 'http-500';
    await expect(run({ markdown })).rejects.toThrow(
      /^llm_translator: language model of profile translator answered HTTP 500/,
    );
    await expect(run({ html: '<p>x</p>' })).rejects.toThrow(
      'llm_translator: the payload has no markdown text',
    );
    await expect(run({ markdown, front_matter: 'x' })).rejects.toThrow('front_matter must be an object');
  });

  it('validates its config and refuses unknown or extractive profiles at creation', () => {
    expect(Value.Check(llmTranslator.config, configOf({ llm_profile: 'translator' }))).toBe(false);
    expect(
      Value.Check(llmTranslator.config, configOf({ llm_profile: 'translator', target_language: 'Norsk' })),
    ).toBe(false);
    expect(
      Value.Check(llmTranslator.config, configOf({ llm_profile: 'translator', target_language: 'en-GB' })),
    ).toBe(true);
    expect(() =>
      llmTranslator.create(configOf({ llm_profile: 'gpt', target_language: 'nb' }), kit.resources),
    ).toThrow('llm_translator: llm profile "gpt" is not configured; llm_profiles has extractive, translator');
    expect(() =>
      llmTranslator.create(configOf({ llm_profile: 'extractive', target_language: 'nb' }), kit.resources),
    ).toThrow(/name an openai profile/);
  });
});

describe('markdown protection', () => {
  it('holds code, link targets and URLs, and restores them exactly', () => {
    const held = protect(markdown);
    expect(held.parts).toEqual([
      '```sh\nnpm start # keep this\n```',
      '`npm install weir`',
      '[1]: https://example.no/ref',
      'https://example.no/docs "Docs"',
      'img/logo.png',
      'https://example.no/faq',
    ]);
    expect(held.text).not.toMatch(/npm|example\.no|logo\.png/);
    expect(restore(held.text, held)).toBe(markdown);
  });

  it('keeps placeholder-looking tokens of the source and nested holds', () => {
    const source = 'Literal ⟦0⟧ and ⟦1⟧, a [link](`code`) and `x`.';
    const held = protect(source);
    expect(held.text).not.toContain('code');
    expect(restore(held.text, held)).toBe(source);
  });

  it('holds an unclosed fence to the end and chunks that join back exactly', () => {
    const held = protect('Text\n\n~~~\ncode\n\nmore code');
    expect(held.parts).toEqual(['~~~\ncode\n\nmore code']);
    const text = `${'a'.repeat(50)}\n\n${'b'.repeat(50)}\n\n\n${'c'.repeat(120)}`;
    const chunks = chunk(text, 110);
    expect(chunks.join('')).toBe(text);
    expect(chunks).toHaveLength(2);
    expect(chunks[1]).toBe('c'.repeat(120)); // a block longer than the limit stays whole
  });
});
