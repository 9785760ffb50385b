/**
 * Synthetic support conversations with known ground truth, deterministic from a seed (tests
 * and bench:conversations). Each conversation has a topic, a language (English, Bokmål,
 * Nynorsk, and Danish and Swedish distractors) and, for the answered ones, the routine the
 * agent walks the user through: steps in a fixed order, each said in one of two phrasings,
 * with a precondition and an outcome. Copies make exact and near duplicates; a few one-liners
 * are too short to classify; some messages carry a personal identifier (pii_redactor's job).
 * Writers put the same conversations into the four export formats.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { seededRandom } from '../../src/conversations/random.js';

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

interface Topic {
  id: string;
  /** Question phrasings per language. */
  questions: Record<'en' | 'nb', string[]>;
  precondition: Record<'en' | 'nb', string>;
  /** Each step in two phrasings. */
  steps: Record<'en' | 'nb', Array<[string, string]>>;
  outcome: Record<'en' | 'nb', string>;
  /** One question and one answer sentence for the distractor languages. */
  distractor: Record<'da' | 'sv', [string, string]>;
}

export const fixtureTopics: readonly Topic[] = [
  {
    id: 'password-reset',
    questions: {
      en: [
        'I forgot my password and cannot log in to my account.',
        'My password does not work any more, how do I reset it?',
        'I am locked out of my account after too many password attempts.',
      ],
      nb: [
        'Jeg har glemt passordet mitt og får ikke logget inn på kontoen.',
        'Passordet mitt virker ikke lenger, hvordan tilbakestiller jeg det?',
        'Jeg er utestengt fra kontoen etter for mange forsøk med passordet.',
      ],
    },
    precondition: {
      en: 'You need access to the e-mail address registered on the account.',
      nb: 'Du må ha tilgang til e-postadressen som er registrert på kontoen.',
    },
    steps: {
      en: [
        [
          'Open the login page and click "Forgot password".',
          'Go to the login page and choose "Forgot password".',
        ],
        [
          'Enter the e-mail address registered on the account.',
          'Type in the e-mail address that the account is registered with.',
        ],
        [
          'Open the reset link in the e-mail we send you within ten minutes.',
          'Click the reset link in the e-mail from us within ten minutes.',
        ],
        [
          'Choose a new password of at least twelve characters.',
          'Pick a new password with at least twelve characters.',
        ],
      ],
      nb: [
        [
          'Åpne innloggingssiden og klikk på «Glemt passord».',
          'Gå til innloggingssiden og velg «Glemt passord».',
        ],
        [
          'Skriv inn e-postadressen som er registrert på kontoen.',
          'Fyll inn e-postadressen kontoen er registrert med.',
        ],
        [
          'Åpne lenken i e-posten vi sender deg innen ti minutter.',
          'Klikk på lenken i e-posten fra oss innen ti minutter.',
        ],
        ['Velg et nytt passord på minst tolv tegn.', 'Lag et nytt passord med minst tolv tegn.'],
      ],
    },
    outcome: {
      en: 'After that you can log in with the new password straight away.',
      nb: 'Etter det kan du logge inn med det nye passordet med en gang.',
    },
    distractor: {
      da: [
        'Jeg har glemt min adgangskode og kan ikke logge ind på min konto.',
        'Gå til login-siden og vælg "Glemt adgangskode", så sender vi dig et link.',
      ],
      sv: [
        'Jag har glömt mitt lösenord och kan inte logga in på mitt konto.',
        'Gå till inloggningssidan och välj "Glömt lösenord", så skickar vi en länk.',
      ],
    },
  },
  {
    id: 'invoice-copy',
    questions: {
      en: [
        'I need a copy of my last invoice for the accounts department.',
        'Where can I download an old invoice as PDF?',
        'Our accountant is asking for the invoice from last month.',
      ],
      nb: [
        'Jeg trenger en kopi av den siste fakturaen til regnskapsavdelingen.',
        'Hvor kan jeg laste ned en gammel faktura som PDF?',
        'Regnskapsføreren vår spør etter fakturaen fra forrige måned.',
      ],
    },
    precondition: {
      en: 'You must be the administrator of the company account to see invoices.',
      nb: 'Du må være administrator for bedriftskontoen for å se fakturaer.',
    },
    steps: {
      en: [
        ['Log in to the customer portal.', 'Sign in to the customer portal.'],
        [
          'Open "Billing" in the menu and select "Invoices".',
          'Choose "Billing" in the menu and then "Invoices".',
        ],
        ['Filter the list on the invoice month.', 'Narrow the invoice list down to the month you need.'],
        [
          'Click the download icon to save the invoice as PDF.',
          'Press the download icon and the invoice is saved as PDF.',
        ],
      ],
      nb: [
        ['Logg inn på kundeportalen.', 'Logg deg inn i kundeportalen.'],
        [
          'Åpne «Fakturering» i menyen og velg «Fakturaer».',
          'Velg «Fakturering» i menyen og deretter «Fakturaer».',
        ],
        ['Filtrer listen på fakturamåneden.', 'Avgrens fakturalisten til måneden du trenger.'],
        [
          'Klikk på nedlastingsikonet for å lagre fakturaen som PDF.',
          'Trykk på nedlastingsikonet, så lagres fakturaen som PDF.',
        ],
      ],
    },
    outcome: {
      en: 'The PDF is the official copy and can be sent to your accountant.',
      nb: 'PDF-en er den offisielle kopien og kan sendes til regnskapsføreren.',
    },
    distractor: {
      da: [
        'Jeg skal bruge en kopi af min seneste faktura til bogholderiet.',
        'Log ind på kundeportalen og åbn "Fakturering", hvor du kan hente fakturaen som PDF.',
      ],
      sv: [
        'Jag behöver en kopia av min senaste faktura till ekonomiavdelningen.',
        'Logga in på kundportalen och öppna "Fakturering", där kan du ladda ner fakturan som PDF.',
      ],
    },
  },
  {
    id: 'vpn-access',
    questions: {
      en: [
        'The VPN will not connect from my home office.',
        'I cannot reach the internal systems over VPN since yesterday.',
        'How do I set up the VPN client on a new laptop?',
      ],
      nb: [
        'VPN-en vil ikke koble til fra hjemmekontoret mitt.',
        'Jeg når ikke de interne systemene over VPN siden i går.',
        'Hvordan setter jeg opp VPN-klienten på en ny bærbar PC?',
      ],
    },
    precondition: {
      en: 'Your laptop must be enrolled in device management first.',
      nb: 'Den bærbare PC-en må være innrullert i enhetsstyringen først.',
    },
    steps: {
      en: [
        [
          'Install the VPN client from the company software centre.',
          'Get the VPN client from the company software centre and install it.',
        ],
        [
          'Start the client and sign in with your work account.',
          'Launch the client and log on with your work account.',
        ],
        [
          'Approve the sign-in in the authenticator app on your phone.',
          'Confirm the sign-in in the authenticator app on your mobile.',
        ],
        [
          'Select the gateway closest to you and press "Connect".',
          'Pick the nearest gateway and click "Connect".',
        ],
      ],
      nb: [
        [
          'Installer VPN-klienten fra firmaets programvaresenter.',
          'Hent VPN-klienten fra firmaets programvaresenter og installer den.',
        ],
        ['Start klienten og logg inn med jobbkontoen din.', 'Åpne klienten og logg på med jobbkontoen din.'],
        [
          'Godkjenn innloggingen i autentiseringsappen på telefonen.',
          'Bekreft innloggingen i autentiseringsappen på mobilen.',
        ],
        ['Velg gatewayen nærmest deg og trykk «Koble til».', 'Velg nærmeste gateway og klikk «Koble til».'],
      ],
    },
    outcome: {
      en: 'When the icon turns green you are connected to the internal network.',
      nb: 'Når ikonet blir grønt er du koblet til det interne nettverket.',
    },
    distractor: {
      da: [
        'VPN-forbindelsen virker ikke hjemmefra, jeg kan ikke komme på de interne systemer.',
        'Installer VPN-klienten fra softwarecentret og log ind med din arbejdskonto.',
      ],
      sv: [
        'VPN-anslutningen fungerar inte hemifrån, jag kommer inte åt de interna systemen.',
        'Installera VPN-klienten från programvarucentret och logga in med ditt jobbkonto.',
      ],
    },
  },
  {
    id: 'parental-leave',
    questions: {
      en: [
        'How do I apply for parental leave?',
        'I am expecting a baby in the spring, what do I need to do about leave?',
        'Where do I register the dates of my parental leave?',
      ],
      nb: [
        'Hvordan søker jeg om foreldrepermisjon?',
        'Vi venter barn til våren, hva må jeg gjøre med permisjonen?',
        'Hvor registrerer jeg datoene for foreldrepermisjonen min?',
      ],
    },
    precondition: {
      en: 'You must have been employed for at least six months before the leave starts.',
      nb: 'Du må ha vært ansatt i minst seks måneder før permisjonen starter.',
    },
    steps: {
      en: [
        [
          'Tell your manager the planned dates at least a month ahead.',
          'Agree the planned dates with your manager at least a month ahead.',
        ],
        [
          'Register the leave period in the HR portal under "Absence".',
          'Enter the leave period in the HR portal under "Absence".',
        ],
        [
          'Apply for parental benefit from the welfare office online.',
          'Send the application for parental benefit to the welfare office online.',
        ],
        [
          'Upload the confirmation from the welfare office to the HR portal.',
          'Attach the welfare office confirmation in the HR portal.',
        ],
      ],
      nb: [
        [
          'Gi lederen din beskjed om planlagte datoer minst en måned i forveien.',
          'Avtal de planlagte datoene med lederen din minst en måned i forveien.',
        ],
        [
          'Registrer permisjonsperioden i HR-portalen under «Fravær».',
          'Legg inn permisjonsperioden i HR-portalen under «Fravær».',
        ],
        ['Søk om foreldrepenger fra NAV på nett.', 'Send søknaden om foreldrepenger til NAV på nett.'],
        ['Last opp bekreftelsen fra NAV i HR-portalen.', 'Legg ved bekreftelsen fra NAV i HR-portalen.'],
      ],
    },
    outcome: {
      en: 'Payroll then adjusts your salary for the leave period automatically.',
      nb: 'Lønnsavdelingen justerer da lønnen for permisjonsperioden automatisk.',
    },
    distractor: {
      da: [
        'Hvordan søger jeg om barselsorlov, vi venter et barn til foråret?',
        'Fortæl din leder om datoerne og registrer orloven i HR-portalen under "Fravær".',
      ],
      sv: [
        'Hur ansöker jag om föräldraledighet, vi väntar barn till våren?',
        'Berätta för din chef om datumen och registrera ledigheten i HR-portalen under "Frånvaro".',
      ],
    },
  },
  {
    id: 'printer-setup',
    questions: {
      en: [
        'How do I add the office printer to my computer?',
        'My laptop cannot find the printer on the third floor.',
        'Printing fails with a driver error on the shared printer.',
      ],
      nb: [
        'Hvordan legger jeg til kontorskriveren på datamaskinen min?',
        'Den bærbare PC-en min finner ikke skriveren i tredje etasje.',
        'Utskrift feiler med en driverfeil på fellesskriveren.',
      ],
    },
    precondition: {
      en: 'You have to be on the office network or connected through VPN.',
      nb: 'Du må være på kontornettet eller koblet til via VPN.',
    },
    steps: {
      en: [
        ['Open the print portal in the browser.', 'Go to the print portal in your browser.'],
        [
          'Download the follow-me print driver for your operating system.',
          'Get the follow-me print driver for your operating system.',
        ],
        ['Run the installer and restart the computer.', 'Run the installer, then restart the computer.'],
        [
          'Release the print job by tapping your access card on the printer.',
          'Tap your access card on the printer to release the print job.',
        ],
      ],
      nb: [
        ['Åpne utskriftsportalen i nettleseren.', 'Gå til utskriftsportalen i nettleseren din.'],
        [
          'Last ned følg-meg-driveren for operativsystemet ditt.',
          'Hent følg-meg-driveren for operativsystemet ditt.',
        ],
        [
          'Kjør installasjonsprogrammet og start datamaskinen på nytt.',
          'Kjør installasjonsprogrammet, og start deretter datamaskinen på nytt.',
        ],
        [
          'Hent utskriften ved å holde adgangskortet mot skriveren.',
          'Hold adgangskortet mot skriveren for å hente utskriften.',
        ],
      ],
    },
    outcome: {
      en: 'The printer then prints your document within a few seconds.',
      nb: 'Skriveren skriver da ut dokumentet ditt i løpet av noen sekunder.',
    },
    distractor: {
      da: [
        'Min bærbare computer kan ikke finde printeren på tredje sal.',
        'Åbn printportalen i browseren og hent driveren til dit styresystem.',
      ],
      sv: [
        'Min bärbara dator hittar inte skrivaren på tredje våningen.',
        'Öppna utskriftsportalen i webbläsaren och hämta drivrutinen för ditt operativsystem.',
      ],
    },
  },
];

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

// ---- writers: one set of conversations, four export formats ----

export function toJsonl(conversations: readonly FixtureConversation[]): string {
  return conversations
    .map((conversation) =>
      JSON.stringify({
        conversation_id: conversation.conversation_id,
        started_at: conversation.started_at,
        title: conversation.title,
        turns: conversation.turns,
      }),
    )
    .join('\n');
}

/** A ChatGPT `conversations.json`: each conversation a mapping tree from a root to `current_node`. */
export function toChatGpt(conversations: readonly FixtureConversation[]): string {
  return JSON.stringify(
    conversations.map((conversation) => {
      const mapping: Record<string, unknown> = {
        root: { id: 'root', message: null, parent: null, children: ['system'] },
        system: {
          id: 'system',
          parent: 'root',
          children: ['n0'],
          message: {
            author: { role: 'system' },
            content: { content_type: 'text', parts: [''] },
            metadata: { is_visually_hidden_from_conversation: true },
          },
        },
      };
      conversation.turns.forEach((turn, index) => {
        mapping[`n${index}`] = {
          id: `n${index}`,
          parent: index === 0 ? 'system' : `n${index - 1}`,
          children: index + 1 < conversation.turns.length ? [`n${index + 1}`] : [],
          message: {
            author: { role: turn.role },
            create_time: Date.parse(turn.at) / 1000,
            content: { content_type: 'text', parts: [turn.text] },
          },
        };
      });
      return {
        id: conversation.conversation_id,
        title: conversation.title,
        create_time: Date.parse(conversation.started_at) / 1000,
        current_node: `n${conversation.turns.length - 1}`,
        mapping,
      };
    }),
  );
}

/** Graph `chatMessage` resources, one chat per conversation, bodies as HTML. */
export function toTeams(conversations: readonly FixtureConversation[]): string {
  const value = conversations.flatMap((conversation) =>
    conversation.turns.map((turn, index) => ({
      id: `${conversation.conversation_id}-${index}`,
      chatId: conversation.conversation_id,
      messageType: 'message',
      createdDateTime: turn.at,
      deletedDateTime: null,
      from:
        turn.role === 'user'
          ? { user: { id: `user-${conversation.conversation_id}`, displayName: 'Asker' }, application: null }
          : { user: null, application: { id: 'helpdesk-bot', displayName: 'Helpdesk' } },
      body: {
        contentType: 'html',
        content: turn.text
          .split('\n')
          .map((line) => `<p>${line.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</p>`)
          .join(''),
      },
    })),
  );
  return JSON.stringify({
    '@odata.context': 'https://graph.microsoft.com/v1.0/$metadata#chats/messages',
    value,
  });
}

/** A Slack export: each conversation a thread in channel `support`, day files by the thread's date. */
export function toSlack(conversations: readonly FixtureConversation[]): Map<string, string> {
  const days = new Map<string, unknown[]>();
  conversations.forEach((conversation, position) => {
    const threadTs = `${Math.floor(Date.parse(conversation.started_at) / 1000)}.${String(position).padStart(6, '0')}`;
    conversation.turns.forEach((turn, index) => {
      const day = turn.at.slice(0, 10);
      const ts = `${Math.floor(Date.parse(turn.at) / 1000) + index}.${String(position).padStart(6, '0')}`;
      const message =
        turn.role === 'user'
          ? {
              type: 'message',
              user: `U${position}`,
              text: turn.text,
              ts: index === 0 ? threadTs : ts,
              thread_ts: threadTs,
            }
          : {
              type: 'message',
              subtype: 'bot_message',
              bot_id: 'BHELP',
              text: turn.text,
              ts,
              thread_ts: threadTs,
            };
      days.set(`support/${day}.json`, [...(days.get(`support/${day}.json`) ?? []), message]);
    });
  });
  const files = new Map<string, string>([['channels.json', JSON.stringify([{ id: 'C1', name: 'support' }])]]);
  for (const [file, messages] of [...days].sort()) files.set(file, JSON.stringify(messages));
  return files;
}

/** Writes the conversations in every format under `directory` and returns the paths. */
export async function writeFixtureExports(directory: string, conversations: readonly FixtureConversation[]) {
  await mkdir(path.join(directory, 'chatgpt'), { recursive: true });
  const paths = {
    jsonl: path.join(directory, 'conversations.jsonl'),
    chatgpt: path.join(directory, 'chatgpt', 'conversations.json'),
    teams: path.join(directory, 'teams-messages.json'),
    slack: path.join(directory, 'slack-export'),
  };
  await writeFile(paths.jsonl, toJsonl(conversations));
  await writeFile(paths.chatgpt, toChatGpt(conversations));
  await writeFile(paths.teams, toTeams(conversations));
  for (const [file, body] of toSlack(conversations)) {
    await mkdir(path.dirname(path.join(paths.slack, file)), { recursive: true });
    await writeFile(path.join(paths.slack, file), body);
  }
  return paths;
}
