/**
 * Synthetic support conversations with known ground truth, deterministic from a seed (tests
 * and bench:conversations). Each conversation has a topic, a language (English, Bokmål,
 * Nynorsk, and Danish and Swedish distractors) and, for the answered ones, the routine the
 * agent walks the user through: steps in a fixed order, each said in one of two phrasings,
 * with a precondition and an outcome. Copies make exact and near duplicates; a few one-liners
 * are too short to classify; some messages carry a personal identifier (pii_redactor's job).
 * The topics are in conversation-topics.ts; conversation-exports.ts writes the same
 * conversations in the four export formats.
 */
import { seededRandom } from '../../src/conversations/random.js';
import { fixtureTopics } from './conversation-topics.js';

export type FixtureLanguage = 'en' | 'nb' | 'nn' | 'da' | 'sv';

export interface FixtureConversation {
  conversation_id: string;
  started_at: string;
  title: string;
  turns: Array<{ role: 'user' | 'assistant'; text: string; at: string }>;
  truth: {
    topic: string;
    language: FixtureLanguage;
    /** Set on a copy: the conversation it copies. */
    duplicate_of?: string;
    exact_duplicate?: boolean;
    /** Too short for any language detector. */
    short?: boolean;
  };
}

export interface FixtureOptions {
  seed: number;
  /** Conversations before duplicates are added. */
  count: number;
  /** Share of each language (normalised). */
  languages?: Partial<Record<FixtureLanguage, number>>;
  /** Share of conversations copied exactly, and with a small edit. */
  exactDuplicates?: number;
  nearDuplicates?: number;
  /** Share of one-line conversations too short to classify. */
  short?: number;
  /** Share of conversations whose user message carries an e-mail address or national id. */
  withIdentifier?: number;
}

const greetings: Record<FixtureLanguage, string[]> = {
  en: ['Hi,', 'Hello,', 'Good morning,', ''],
  nb: ['Hei,', 'Hallo,', 'God morgen,', ''],
  nn: ['Hei,', 'Hallo,', 'God morgon,', ''],
  da: ['Hej,', 'Goddag,', ''],
  sv: ['Hej,', 'God morgon,', ''],
};

const context: Record<FixtureLanguage, string[]> = {
  en: [
    'I tried a couple of times already.',
    'It is quite urgent for me today.',
    'A colleague said you could help.',
    'I work at the Bergen office.',
    '',
  ],
  nb: [
    'Jeg har prøvd et par ganger allerede.',
    'Det haster litt for meg i dag.',
    'En kollega sa at dere kunne hjelpe.',
    'Jeg jobber på kontoret i Bergen.',
    '',
  ],
  nn: [
    'Eg har prøvd eit par gonger allereie.',
    'Det hastar litt for meg i dag.',
    'Ein kollega sa at de kunne hjelpe.',
    'Eg jobbar på kontoret i Bergen.',
    '',
  ],
  da: [
    'Jeg har allerede prøvet et par gange.',
    'Det haster lidt for mig i dag.',
    'En kollega sagde, at I kunne hjælpe.',
    'Jeg arbejder på kontoret i Aarhus.',
    '',
  ],
  sv: [
    'Jag har redan försökt ett par gånger.',
    'Det är ganska bråttom för mig i dag.',
    'En kollega sa att ni kunde hjälpa till.',
    'Jag jobbar på kontoret i Göteborg.',
    '',
  ],
};

const thanks: Record<FixtureLanguage, string[]> = {
  en: ['Thanks, that worked!', 'Great, thank you.', 'Perfect, it works now.'],
  nb: ['Takk, det fungerte!', 'Supert, tusen takk.', 'Perfekt, nå virker det.'],
  nn: ['Takk, det fungerte!', 'Supert, tusen takk.', 'Perfekt, no verkar det.'],
  da: ['Tak, det virkede!', 'Super, mange tak.'],
  sv: ['Tack, det fungerade!', 'Toppen, tack så mycket.'],
};

const names = [
  'Kari',
  'Ola',
  'Ingrid',
  'Lars',
  'Sofie',
  'Jonas',
  'Nora',
  'Emil',
  'Anna',
  'Henrik',
  'Maja',
  'Sander',
  'Ida',
  'Magnus',
  'Thea',
  'Erik',
];
const devices = ['ThinkPad', 'MacBook', 'Surface', 'EliteBook', 'Latitude', 'iPad', 'Chromebook', 'Pixel'];
const places = ['Oslo', 'Bergen', 'Trondheim', 'Tromsø', 'Stavanger', 'Bodø', 'Kristiansand', 'Ålesund'];

/** A sentence only this conversation has: who asks, on what, from where (different conversations differ). */
function personalDetails(language: FixtureLanguage, random: () => number): { user: string; answer: string } {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const name = pick(names);
  const device = `${pick(devices)} ${Math.floor(random() * 900) + 100}`;
  const place = pick(places);
  const ticket = Math.floor(random() * 90_000) + 10_000;
  const hour = Math.floor(random() * 9) + 8;
  const details: Record<FixtureLanguage, { user: string; answer: string }> = {
    en: {
      user: `This is ${name} in ${place}, I am on a ${device} and it started around ${hour} o'clock, ticket ${ticket}.`,
      answer: `Thanks ${name}, I have opened ticket ${ticket} for the ${device} in ${place}.`,
    },
    nb: {
      user: `Dette er ${name} i ${place}, jeg bruker en ${device} og det startet rundt klokka ${hour}, sak ${ticket}.`,
      answer: `Takk ${name}, jeg har åpnet sak ${ticket} for ${device} i ${place}.`,
    },
    nn: {
      user: `Dette er ${name} i ${place}, eg brukar ein ${device} og det starta rundt klokka ${hour}, sak ${ticket}.`,
      answer: `Takk ${name}, eg har opna sak ${ticket} for ${device} i ${place}.`,
    },
    da: {
      user: `Det er ${name} i ${place}, jeg bruger en ${device}, og det startede omkring klokken ${hour}, sag ${ticket}.`,
      answer: `Tak ${name}, jeg har oprettet sag ${ticket} for ${device} i ${place}.`,
    },
    sv: {
      user: `Det är ${name} i ${place}, jag använder en ${device} och det började runt klockan ${hour}, ärende ${ticket}.`,
      answer: `Tack ${name}, jag har öppnat ärende ${ticket} för ${device} i ${place}.`,
    },
  };
  return details[language];
}

const shortMessages = ['ok', 'takk!', 'hei', 'ok takk', 'thanks', '?', 'tak', 'tack', 'ja', 'nei'];

/** Nynorsk from Bokmål, word by word: the common forms that tell the two apart. */
const nynorskWords: Record<string, string> = {
  jeg: 'eg',
  ikke: 'ikkje',
  hva: 'kva',
  hvordan: 'korleis',
  hvor: 'kor',
  noen: 'nokon',
  noe: 'noko',
  fra: 'frå',
  være: 'vere',
  vært: 'vore',
  etter: 'etter',
  mitt: 'mitt',
  min: 'min',
  deg: 'deg',
  dere: 'de',
  lenger: 'lenger',
  kan: 'kan',
  får: 'får',
  har: 'har',
  må: 'må',
  velg: 'vel',
  skriv: 'skriv',
  åpne: 'opne',
  lag: 'lag',
  et: 'eit',
  en: 'ein',
  ei: 'ei',
  det: 'det',
  nytt: 'nytt',
  nye: 'nye',
  sender: 'sender',
  når: 'når',
  blir: 'blir',
  vil: 'vil',
  koble: 'kople',
  koblet: 'kopla',
  gjøre: 'gjere',
  søker: 'søkjer',
  søk: 'søk',
  hjemmekontoret: 'heimekontoret',
  siden: 'sidan',
  'i går': 'i går',
  skriveren: 'skrivaren',
  lederen: 'leiaren',
  datamaskinen: 'datamaskina',
  listen: 'lista',
  lenken: 'lenkja',
  innloggingen: 'innlogginga',
  klienten: 'klienten',
  dokumentet: 'dokumentet',
  lønnen: 'løna',
  trenger: 'treng',
  virker: 'verkar',
  nå: 'no',
  gang: 'gong',
  gammel: 'gamal',
  forrige: 'førre',
  tilbakestiller: 'tilbakestiller',
  søknaden: 'søknaden',
  bekreftelsen: 'stadfestinga',
  tegn: 'teikn',
  ansatt: 'tilsett',
  minst: 'minst',
  hente: 'hente',
  hent: 'hent',
  også: 'òg',
  bare: 'berre',
  ved: 'ved',
};

export function toNynorsk(text: string): string {
  return text.replace(/\p{L}+/gu, (word) => {
    const lower = word.toLowerCase();
    const replaced = nynorskWords[lower];
    if (!replaced) return word;
    return word[0] === word[0]?.toUpperCase() ? replaced[0]?.toUpperCase() + replaced.slice(1) : replaced;
  });
}

export function generateConversations(options: FixtureOptions): FixtureConversation[] {
  const random = seededRandom(options.seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const languageShares = options.languages ?? { en: 0.2, nb: 0.4, nn: 0.2, da: 0.1, sv: 0.1 };
  const languageList = Object.entries(languageShares) as Array<[FixtureLanguage, number]>;
  const totalShare = languageList.reduce((sum, [, share]) => sum + share, 0);
  const chooseLanguage = (): FixtureLanguage => {
    let target = random() * totalShare;
    for (const [language, share] of languageList) {
      target -= share;
      if (target <= 0) return language;
    }
    return languageList[0]?.[0] ?? 'en';
  };
  const start = Date.UTC(2025, 0, 6);
  const conversations: FixtureConversation[] = [];
  for (let index = 0; index < options.count; index++) {
    const id = `conv-${options.seed}-${String(index).padStart(6, '0')}`;
    const at = start + Math.floor(random() * 300) * 86_400_000 + Math.floor(random() * 36_000) * 1000;
    const time = (offset: number) => new Date(at + offset * 60_000).toISOString();
    if (random() < (options.short ?? 0.03)) {
      conversations.push({
        conversation_id: id,
        started_at: time(0),
        title: 'Short message',
        turns: [{ role: 'user', text: pick(shortMessages), at: time(0) }],
        truth: { topic: 'none', language: pick(['nb', 'en', 'da'] as const), short: true },
      });
      continue;
    }
    const topic = pick(fixtureTopics);
    const language = chooseLanguage();
    const turns: FixtureConversation['turns'] = [];
    const identifier =
      random() < (options.withIdentifier ?? 0.1)
        ? pick([` Min e-post er kari.nordmann${index}@example.no.`, ' Fødselsnummeret mitt er 01010750160.'])
        : '';
    const details = personalDetails(language, random);
    if (language === 'da' || language === 'sv') {
      const [question, answer] = topic.distractor[language];
      turns.push({
        role: 'user',
        text: `${pick(greetings[language])} ${question} ${details.user} ${pick(context[language])}`.trim(),
        at: time(0),
      });
      turns.push({ role: 'assistant', text: `${details.answer}\n${answer}`, at: time(2) });
      turns.push({ role: 'user', text: pick(thanks[language]), at: time(5) });
    } else {
      const base = language === 'en' ? 'en' : 'nb';
      const localise = (text: string) => (language === 'nn' ? toNynorsk(text) : text);
      const question = localise(pick(topic.questions[base]));
      turns.push({
        role: 'user',
        text: `${pick(greetings[language])} ${question} ${details.user} ${pick(context[language])}${identifier}`.trim(),
        at: time(0),
      });
      const steps = topic.steps[base].map(([first, second]) => localise(random() < 0.5 ? first : second));
      const answer = [
        details.answer,
        localise(topic.precondition[base]),
        ...steps.map((step, position) => `${position + 1}. ${step}`),
        localise(topic.outcome[base]),
      ];
      // Half the answers come as one list, half spread over two turns with a question between.
      if (random() < 0.5) {
        turns.push({ role: 'assistant', text: answer.join('\n'), at: time(2) });
      } else {
        turns.push({ role: 'assistant', text: answer.slice(0, 4).join('\n'), at: time(2) });
        turns.push({
          role: 'user',
          text: localise(base === 'en' ? 'Done, what next?' : 'Gjort, hva nå?'),
          at: time(4),
        });
        turns.push({ role: 'assistant', text: answer.slice(4).join('\n'), at: time(5) });
      }
      turns.push({ role: 'user', text: pick(thanks[language]), at: time(8) });
    }
    conversations.push({
      conversation_id: id,
      started_at: time(0),
      title: turns[0]?.text.slice(0, 40) ?? '',
      turns,
      truth: { topic: topic.id, language },
    });
  }
  // Copies: exact ones repeat every turn; near ones change one short sentence.
  const originals = conversations.filter((conversation) => !conversation.truth.short);
  const copies: FixtureConversation[] = [];
  const copy = (share: number, exact: boolean) => {
    const wanted = Math.round(options.count * share);
    for (let n = 0; n < wanted && originals.length > 0; n++) {
      const source = pick(originals);
      const turns = source.turns.map((turn) => ({ ...turn }));
      if (!exact) {
        const last = turns.at(-1) as (typeof turns)[number];
        last.text = pick(thanks[source.truth.language].filter((text) => text !== last.text));
      }
      copies.push({
        ...source,
        conversation_id: `${source.conversation_id}-${exact ? 'copy' : 'near'}-${n}`,
        turns,
        truth: { ...source.truth, duplicate_of: source.conversation_id, exact_duplicate: exact },
      });
    }
  };
  copy(options.exactDuplicates ?? 0.03, true);
  copy(options.nearDuplicates ?? 0.03, false);
  return [...conversations, ...copies];
}
