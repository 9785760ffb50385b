/**
 * A Slack workspace export written from Slack's documented message shapes (file_share,
 * thread_broadcast, bot_message with attachments, an app's Block Kit message, a tombstone,
 * channel_join), not from what the parser reads: test/fixtures/exports/slack-it.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Conversation, defaultParseLimits } from '../model.js';
import { localPackageFiles } from '../packages.js';
import { detectFormat, readPackage } from './read-package.js';
import { blocksText } from './slack.js';

const exportFolder = path.resolve('test/fixtures/exports/slack-it');

async function conversations(): Promise<Conversation[]> {
  const files = await localPackageFiles(exportFolder);
  expect(await detectFormat(files)).toBe('slack');
  const found: Conversation[] = [];
  for await (const item of readPackage('slack', files, defaultParseLimits))
    if ('conversation' in item) found.push(item.conversation);
  return found;
}

const vpnThread = (all: Conversation[]) =>
  all.find((conversation) => conversation.conversation_id === 'slack:it-support:thread:1709546400.000200');

describe('Slack export as Slack writes it', () => {
  it('keeps what a person wrote whatever its subtype: a file shared with a comment, a reply sent to the channel', async () => {
    const thread = vpnThread(await conversations());
    const said = thread?.turns.map((turn) => [turn.role, turn.text]);
    expect(said).toContainEqual([
      'user',
      'Her er skjermbilde av feilen\n[file: Skjermbilde 2024-03-04 kl. 10.01.png]',
    ]);
    // A screenshot shared without a comment is still the person's turn.
    expect(said).toContainEqual(['user', '[file: Profilen er slettet]']);
    // thread_broadcast: in the thread, across days, as the asker's turn.
    expect(said?.at(-1)).toEqual([
      'user',
      'Takk, nå fungerer VPN igjen etter at jeg lastet ned profilen på nytt! :tada:',
    ]);
    expect(thread?.turns.filter((turn) => turn.role === 'system')).toEqual([]);
    expect(thread?.turns.find((turn) => turn.role === 'agent')?.text).toMatch(
      /^Det er en kjent feil.*\n1\. Åpne/s,
    );
  });

  it("keeps a bot's text from its attachments and blocks, marked with the bot's name", async () => {
    const all = await conversations();
    const jira = vpnThread(all)?.turns.find((turn) => turn.bot);
    expect(jira).toMatchObject({ role: 'assistant', bot: 'Jira' });
    expect(jira?.text).toBe(
      'OPS-1234: VPN feiler med feilmelding 809 etter oppdatering\nOpprettet fra Slack av Ola IT\nStatus: Open\nPrioritet: High\nJira Cloud',
    );
    const day = all.find(
      (conversation) => conversation.conversation_id === 'slack:it-support:day:2024-03-04',
    );
    expect(day?.turns).toEqual([
      expect.objectContaining({ role: 'system', text: '@user has joined the channel' }),
      {
        role: 'assistant',
        bot: 'Build Status',
        text: 'Bygg #512 feilet\n*vpn-klient* på `main`: 3 tester feilet. Se loggen',
        at: '2024-03-04T11:00:00.000Z',
      },
    ]);
  });

  it('leaves out a deleted parent (tombstone) and keeps its replies', async () => {
    const thread = (await conversations()).find((conversation) =>
      conversation.conversation_id.endsWith('1709632800.000100'),
    );
    expect(thread?.turns.map((turn) => [turn.role, turn.text])).toEqual([
      ['user', 'Noen som vet når skriveren i 3. etasje blir fikset?'],
    ]);
  });

  it('reads rich text lists with their numbers and quotes marked', () => {
    const text = blocksText([
      {
        type: 'rich_text',
        elements: [
          { type: 'rich_text_section', elements: [{ type: 'text', text: 'Gjør slik:' }] },
          {
            type: 'rich_text_list',
            style: 'ordered',
            indent: 0,
            elements: [
              {
                type: 'rich_text_section',
                elements: [
                  { type: 'text', text: 'Åpne ' },
                  { type: 'link', url: 'https://portal.example.com', text: 'portalen' },
                ],
              },
              {
                type: 'rich_text_section',
                elements: [
                  { type: 'text', text: 'Spør ' },
                  { type: 'user', user_id: 'U1' },
                ],
              },
            ],
          },
          { type: 'rich_text_quote', elements: [{ type: 'text', text: 'gammel melding' }] },
        ],
      },
    ]);
    expect(text).toBe('Gjør slik:\n1. Åpne portalen\n2. Spør @user\n> gammel melding');
  });

  it('reads the export as a ZIP (a top folder inside) into the same conversations as the folder', async () => {
    const files = await localPackageFiles(path.resolve('test/fixtures/exports/zips/slack-it.zip'));
    expect(await detectFormat(files)).toBe('slack');
    const zipped: Conversation[] = [];
    for await (const item of readPackage('slack', files, defaultParseLimits))
      if ('conversation' in item) zipped.push(item.conversation);
    expect(zipped).toEqual(await conversations());
  });
});
