import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MessageSkipped } from '../adapter.js';
import { type AdapterTestKit, collectOutputs, createAdapterTestKit } from '../adapter-testing.js';
import { fileshareEnumerator } from './fileshare-enumerator.js';
import { fileshareFetcher } from './fileshare-fetcher.js';

let base: string;
let share: string;
let kit: AdapterTestKit;

beforeAll(async () => {
  base = await mkdtemp(path.join(tmpdir(), 'weir-share-'));
  share = path.join(base, 'share');
  await mkdir(path.join(share, 'guides', 'deep'), { recursive: true });
  await mkdir(path.join(share, '.git'));
  await writeFile(path.join(share, 'readme.md'), '# Readme\n');
  await writeFile(path.join(share, 'guides', 'setup.html'), '<h1>Setup</h1>');
  await writeFile(path.join(share, 'guides', 'deep', 'notes.txt'), 'notes');
  await writeFile(path.join(share, 'guides', 'image.png'), 'png');
  await writeFile(path.join(share, '.git', 'config'), 'secret');
  await writeFile(path.join(base, 'outside.md'), 'outside the share');
  await symlink(path.join(base, 'outside.md'), path.join(share, 'link.md'));
  kit = await createAdapterTestKit({ settings: { fileshare_roots: [share] } });
});
afterAll(async () => {
  await kit.close();
  await rm(base, { recursive: true, force: true });
});

describe('fileshare_enumerator (local)', () => {
  it('lists document files recursively, sorted, skipping hidden files, symlinks and other types', async () => {
    const handler = fileshareEnumerator.create(
      {
        provider: 'local',
        root: share,
        extensions: ['.md', '.html', '.txt'],
        paths: [],
        recursive: true,
        max_files: 100,
      },
      kit.resources,
    );
    const outputs = await collectOutputs(await handler({}, kit.context({ destination: 'fetch' })));
    expect(outputs.map((output) => output.payload.path)).toEqual([
      'readme.md',
      'guides/setup.html',
      'guides/deep/notes.txt',
    ]);
    expect(outputs[0]).toMatchObject({
      destination: 'fetch',
      payload: { provider: 'local', name: 'readme.md', size: 9 },
    });
  });

  it('refuses a root outside the allowed roots', async () => {
    const handler = fileshareEnumerator.create(
      { provider: 'local', root: base, extensions: [], paths: [], recursive: true, max_files: 10 },
      kit.resources,
    );
    await expect(handler({}, kit.context())).rejects.toThrow(/outside the allowed roots/);
    await expect(handler({ root: '/etc' }, kit.context())).rejects.toThrow(/outside the allowed roots/);
  });

  it('stops at max_files', async () => {
    const handler = fileshareEnumerator.create(
      { provider: 'local', root: share, extensions: [], paths: [], recursive: true, max_files: 2 },
      kit.resources,
    );
    expect(await collectOutputs(await handler({}, kit.context()))).toHaveLength(2);
  });
});

describe('fileshare_enumerator paths (single entries under a wider root)', () => {
  const entries = (paths: string[]) =>
    fileshareEnumerator.create(
      { provider: 'local', root: base, extensions: ['.md', '.html'], paths, recursive: true, max_files: 100 },
      kit.resources,
    );

  it('lists a named file and a named folder under a root that is not itself allowed', async () => {
    const outputs = await collectOutputs(
      await entries(['share/readme.md', 'share/guides'])({}, kit.context()),
    );
    expect(outputs.map((output) => output.payload.path)).toEqual([
      'share/readme.md',
      'share/guides/setup.html',
    ]);
    expect(outputs[0]?.payload).toMatchObject({ root: base, name: 'readme.md' });
  });

  it('refuses an entry outside the allowed roots, or leaving the root', async () => {
    await expect(collectOutputs(await entries(['outside.md'])({}, kit.context()))).rejects.toThrow(
      /outside the allowed roots/,
    );
    expect(
      fileshareEnumerator.checkSettings?.(
        {
          provider: 'local',
          root: base,
          extensions: [],
          paths: ['outside.md'],
          recursive: true,
          max_files: 1,
        },
        kit.resources.settings,
      ),
    ).toMatchObject([{ code: 'E211', field: ['paths'] }]);
  });

  it('lets the fetcher read a listed file under that root, and nothing else there', async () => {
    const fetcher = fileshareFetcher.create({ max_file_size_mb: 1 }, kit.resources);
    const [output] = await collectOutputs(
      await fetcher({ root: base, path: 'share/readme.md' }, kit.context()),
    );
    expect(output?.payload).toMatchObject({ name: 'readme.md', path: 'share/readme.md' });
    await expect(fetcher({ root: base, path: 'outside.md' }, kit.context())).rejects.toThrow(
      /outside the allowed roots/,
    );
  });
});

describe('fileshare_fetcher (local)', () => {
  const fetcher = () => fileshareFetcher.create({ max_file_size_mb: 1 }, kit.resources);

  it('stores the file with its URL in the sidecar and emits its storage key', async () => {
    const [output] = await collectOutputs(
      await fetcher()({ root: share, path: 'guides/setup.html' }, kit.context()),
    );
    expect(output?.payload).toMatchObject({
      name: 'setup.html',
      path: 'guides/setup.html',
      content_length: 14,
      content_type: 'text/html; charset=utf-8',
    });
    const key = output?.payload.storage_key as string;
    expect((await kit.storage.get(key)).toString()).toBe('<h1>Setup</h1>');
    expect((await kit.storage.stat(key))?.metadata.url).toMatch(/^file:\/\/.*guides\/setup\.html$/);
  });

  it('refuses traversal, absolute paths and symlinks out of the share', async () => {
    await expect(fetcher()({ root: share, path: '../outside.md' }, kit.context())).rejects.toThrow(
      /leaves the share/,
    );
    await expect(fetcher()({ root: share, path: '/etc/passwd' }, kit.context())).rejects.toThrow(
      /not a relative path/,
    );
    await expect(fetcher()({ root: share, path: 'link.md' }, kit.context())).rejects.toThrow(
      /outside the share/,
    );
  });

  it('refuses a file behind a folder replaced by a symlink out of the share after it read there', async () => {
    const root = path.join(share, 'replaced');
    await mkdir(path.join(root, 'guides'), { recursive: true });
    await writeFile(path.join(root, 'guides', 'page.md'), 'inside');
    await mkdir(path.join(base, 'elsewhere'), { recursive: true });
    await writeFile(path.join(base, 'elsewhere', 'page.md'), 'outside the share');
    // One fetcher for both files, as a step reads a share: its root was resolved by the first.
    const fetch = fetcher();
    const [first] = await collectOutputs(await fetch({ root, path: 'guides/page.md' }, kit.context()));
    expect((await kit.storage.get(first?.payload.storage_key as string)).toString()).toBe('inside');
    await rm(path.join(root, 'guides'), { recursive: true });
    await symlink(path.join(base, 'elsewhere'), path.join(root, 'guides'));
    await expect(fetch({ root, path: 'guides/page.md' }, kit.context())).rejects.toThrow(/outside the share/);
    await rm(root, { recursive: true, force: true });
  });

  it('skips a file that vanished and fails one over the size limit', async () => {
    await expect(fetcher()({ root: share, path: 'gone.md' }, kit.context())).rejects.toBeInstanceOf(
      MessageSkipped,
    );
    await writeFile(path.join(share, 'big.txt'), Buffer.alloc(1024 * 1024 + 1));
    await expect(fetcher()({ root: share, path: 'big.txt' }, kit.context())).rejects.toThrow(
      /over the limit/,
    );
  });
});
