/**
 * The support topics of the synthetic conversations (test/helpers/conversation-fixtures.ts): for
 * each, how users ask, and the routine the agent walks them through (a precondition, steps in a
 * fixed order each in two phrasings, an outcome), in English and Bokmål, with one question and
 * answer in Danish and Swedish for the distractor conversations.
 */
export interface Topic {
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
