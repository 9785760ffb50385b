/**
 * A Teams export as Microsoft Graph returns chat messages (a `chatMessage` page with
 * `@odata.context` and `value`): five one-to-one chats of one task, answered with numbered
 * steps in `<ol>`, plus a system event, an app's Adaptive Card, a shared file and a deleted
 * message. Written from the Graph chatMessage documentation: test/fixtures/exports/teams-mfa.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compactConversation } from '../compact.js';
import { type Conversation, defaultParseLimits } from '../model.js';
import { localPackageFiles } from '../packages.js';
import { discoverRoutine } from '../routines.js';
import { detectFormat, readPackage } from './read-package.js';
import { htmlToText } from './teams.js';

const exportFile = path.resolve('test/fixtures/exports/teams-mfa/messages.json');

async function conversations(): Promise<Conversation[]> {
  const files = await localPackageFiles(exportFile);
  expect(await detectFormat(files)).toBe('teams');
  const found: Conversation[] = [];
  for await (const item of readPackage('teams', files, defaultParseLimits))
    if ('conversation' in item) found.push(item.conversation);
  return found;
}

describe('Teams chat messages as Microsoft Graph returns them', () => {
  it('keeps the numbers of <ol> items, indents nested lists, and honours <ol start>', () => {
    expect(
      htmlToText(
        '<p>Gjør slik:</p><ol><li><p>Gå til portalen</p></li><li>Velg metode<ul><li>eller en annen app</li></ul></li><li>Skann koden</li></ol>',
      ),
    ).toBe('Gjør slik:\n1. Gå til portalen\n2. Velg metode\n  - eller en annen app\n3. Skann koden');
    expect(htmlToText('<ol start="4"><li>Fjerde</li><li>Femte</li></ol>')).toBe('4. Fjerde\n5. Femte');
    expect(htmlToText('<div>Hei <at id="0">Liv Berg</at>, se <emoji id="x" alt="👍"></emoji></div>')).toBe(
      'Hei @user, se 👍',
    );
  });

  it('finds the routine of five chats answered with numbered steps', async () => {
    const all = await conversations();
    expect(all).toHaveLength(5);
    const routine = discoverRoutine(
      all.map((conversation) => {
        const compact = compactConversation(conversation);
        return { conversation_id: compact.conversation_id, turns: compact.turns };
      }),
    );
    expect(routine?.steps.map((step) => step.text)).toEqual([
      'Gå til aka.ms/mfasetup og logg inn',
      'Slett den gamle telefonen under Sikkerhetsinformasjon',
      'Velg Legg til påloggingsmetode og velg Authenticator-appen',
      'Skann QR-koden med den nye telefonen',
    ]);
    expect(routine?.conversation_ids).toHaveLength(5);
  });

  it("keeps an app's Adaptive Card text marked with the app, a shared file's name, and leaves system events to `system`", async () => {
    const all = await conversations();
    const first = all.find((conversation) => conversation.conversation_id.startsWith('teams:19:kari-per'));
    expect(first?.turns.find((turn) => turn.bot)).toMatchObject({
      role: 'assistant',
      bot: 'ServiceDesk',
      text: 'Sak INC0042 er løst\nKategori: MFA\nStatus: Løst',
    });
    const second = all.find((conversation) => conversation.conversation_id.startsWith('teams:19:kari-liv'));
    expect(second?.turns.map((turn) => turn.text)).toContain('Her er feilen\n[file: feil.png]');
    expect(second?.turns[0]?.role).toBe('user');
    expect(second?.turns.find((turn) => turn.role === 'agent')?.text).toMatch(
      /^Hei @user, prøv dette:\n1\. Logg inn/,
    );
  });
});
