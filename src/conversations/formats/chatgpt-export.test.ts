/**
 * A ChatGPT data export as users have it: the ZIP from "Export data", or that ZIP unzipped
 * into a folder (conversations.json beside user.json, message_feedback.json, chat.html,
 * model_comparisons.json, shared_conversations.json and an uploaded image). Written from
 * descriptions of the export: test/fixtures/exports/chatgpt-export and zips/chatgpt-export.zip.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type Conversation, defaultParseLimits } from '../model.js';
import { listLocalPackages, localPackageFiles } from '../packages.js';
import { packageContents } from './export-layout.js';
import { detectFormat, readPackage } from './read-package.js';

const fixtures = path.resolve('test/fixtures/exports');
const scratch = await mkdtemp(path.join(tmpdir(), 'weir-chatgpt-export-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

async function read(location: string) {
  const files = await localPackageFiles(location);
  const format = await detectFormat(files);
  const conversations: Conversation[] = [];
  for await (const item of readPackage(format, files, defaultParseLimits))
    if ('conversation' in item) conversations.push(item.conversation);
  return { format, conversations, ignored: packageContents(format, files).ignored };
}

const ignoredNames = [
  'chat.html',
  'file-7hQmVx2-vpn-feil.png',
  'message_feedback.json',
  'model_comparisons.json',
  'shared_conversations.json',
  'user.json',
];

describe('ChatGPT data export, zipped or unzipped', () => {
  it('finds an unzipped export folder under the root as one package, and the ZIP as another', async () => {
    const root = path.join(scratch, 'share');
    await cp(path.join(fixtures, 'chatgpt-export'), path.join(root, 'kari-chatgpt'), { recursive: true });
    await cp(path.join(fixtures, 'zips/chatgpt-export.zip'), path.join(root, 'ola-chatgpt.zip'));
    expect((await listLocalPackages(root)).map((found) => found.path)).toEqual([
      'kari-chatgpt',
      'ola-chatgpt.zip',
    ]);
  });

  it('reads a root that is itself the unzipped export as one package: user.json is no package of its own', async () => {
    const root = path.join(scratch, 'unzipped-root');
    await cp(path.join(fixtures, 'chatgpt-export'), root, { recursive: true });
    expect(await listLocalPackages(root)).toEqual([{ path: '', size: expect.any(Number) }]);
  });

  it.each([
    ['the unzipped folder', 'chatgpt-export'],
    ['the ZIP', 'zips/chatgpt-export.zip'],
  ])('reads %s as one export: its conversations, and names each other file with why it is ignored', async (_name, location) => {
    const { format, conversations, ignored } = await read(path.join(fixtures, location));
    expect(format).toBe('chatgpt');
    expect(conversations.map((conversation) => conversation.title)).toEqual([
      'Bytte utløpt passord',
      'Glemt passord VPN',
      'Utløpt passord VPN',
      'VPN innlogging feiler',
    ]);
    expect(ignored.map((file) => file.path)).toEqual(ignoredNames);
    expect(ignored.find((file) => file.path === 'user.json')?.reason).toMatch(/account profile/);
    expect(ignored.find((file) => file.path === 'chat.html')?.reason).toMatch(
      /conversations\.json is read instead/,
    );
    // Custom instructions are not a user turn; the regenerated-away answer is not on the branch.
    const first = conversations[0];
    expect(first?.turns.map((turn) => turn.role)).toEqual(['user', 'assistant']);
    expect(first?.turns[1]?.text).toMatch(/^Det er vanlig/);
    // The screenshot the user attached is named beside their text.
    expect(conversations[1]?.turns[0]?.text).toMatch(
      /får ikke koblet til VPN hjemmefra\. Hva gjør jeg\?\n\[file: vpn-feil\.png\]$/,
    );
  });

  it('reads partitioned conversations-000.json, conversations-001.json in order', async () => {
    const root = path.join(scratch, 'partitioned');
    await cp(
      path.join(fixtures, 'chatgpt-export/conversations.json'),
      path.join(root, 'conversations-001.json'),
    );
    await cp(
      path.join(fixtures, 'chatgpt-export/conversations.json'),
      path.join(root, 'conversations-000.json'),
    );
    await cp(path.join(fixtures, 'chatgpt-export/user.json'), path.join(root, 'user.json'));
    const { conversations, ignored } = await read(root);
    expect(conversations).toHaveLength(8);
    expect(ignored).toEqual([{ path: 'user.json', reason: expect.stringMatching(/account profile/) }]);
  });
});
