/**
 * Cluster labels offline (conv_catalog): class-based TF-IDF (c-TF-IDF, as in BERTopic) — each
 * cluster's conversations read as one document, a term weighted by its frequency in the
 * cluster against its frequency across all clusters. A term must occur in at least
 * `minDocuments` conversations of the cluster, so a name, an order number or any other word
 * only one conversation used never becomes a label.
 */

const stopwords = new Set(
  // English
  (
    'the a an and or but if then so to of in on at for with from by as is are was were be been being it its this that these those ' +
    'i me my we our you your he she they them their what which who whom how when where why can could would should will shall may might ' +
    'do does did done have has had not no yes please thanks thank hi hello hey there here also just about into out up down over again ' +
    'than too very more most some any all each other such only own same get got need want like know let one two ok okay sure help ' +
    'user assistant agent system am im ive dont cant its youre thats first then next after finally now see use using make ' +
    // Norwegian (bokmål and nynorsk), Danish, Swedish
    'og i jeg eg du han hun ho vi dere de det den at å på til av for med er var har hadde kan kunne vil ville skal skulle må ' +
    'ikke ikkje ja nei hei hallo takk som om men så når hva kva hvordan korleis hvor kor der her meg deg seg oss min mitt mine din ditt ' +
    'sin sitt en ei et eit ein fra frå etter før inn ut opp ned også bare berre noe noko noen nokon alle være vere blir blei bli ' +
    'jag och är inte att det som på för med har kan vill ska mig dig oss min mitt hur vad var här där också bara något några ' +
    'jeg og ikke hvad hvordan hvor mig dig os min mit noget nogen også bare være blive kan vil skal har havde hej tak først så deretter ' +
    'deretter derfor gjøre gjere gjør gjer trenger treng'
  ).split(/\s+/),
);

/**
 * Words any topic's conversations use — common verbs, adjectives, conjunctions ("får",
 * "velg", "nytt", "eller") — kept out of catalogue keywords, where they made labels like
 * "passord, vpn, nytt". Routines still see them: "Velg" and "Klikk" tell two steps apart.
 */
const labelStopwords = new Set(
  (
    'eller enn fordi hvis dersom mens uten under mellom over hele helt litt mye mer mest ganske igjen fortsatt allerede ' +
    'får fått fikk går gikk gått gjorde gjort prøv prøve prøver prøvd prøvde prøvet fungerer fungerte funker virker ' +
    'virket står sto sier sagt ser sett kommer kom kommet tar tok tatt gir gitt lage lager laget bruke bruker brukt ' +
    'brukte hjelpe hjelpen vet vite tror synes finne finner fant funnet ligger legg legge velg velge velger valgt klikk ' +
    'klikke trykk trykke åpne åpner skriv skrive sjekk sjekke kan kunne måtte ønsker ønske slik sånn dette disse ' +
    'ny nytt nye gammel gamle gamla annen annet andre samme egen eget egne bra fint godt dag går kanskje akkurat ' +
    'nya nytt gör göra fungerar funkar får fick ' +
    'gets getting try tried trying tries works worked says said seems going goes went come comes came take takes ' +
    'took give gives gave tell told think thought still already new old click open select choose enter type'
  ).split(/\s+/),
);

export function terms(text: string): string[] {
  return (text.toLowerCase().match(/[\p{L}][\p{L}\p{N}-]*/gu) ?? []).filter(
    (term) => term.length >= 3 && !stopwords.has(term),
  );
}

/** The top terms of each cluster; `documents[c]` are the texts of cluster c's conversations. */
export function clusterKeywords(
  documents: readonly (readonly string[])[],
  options: { top: number; minDocuments: number },
): Array<Array<{ term: string; weight: number }>> {
  const counts = documents.map((texts) => {
    const frequency = new Map<string, number>();
    const documentFrequency = new Map<string, number>();
    for (const text of texts) {
      const seen = new Set<string>();
      for (const term of terms(text)) {
        if (labelStopwords.has(term)) continue;
        frequency.set(term, (frequency.get(term) ?? 0) + 1);
        seen.add(term);
      }
      for (const term of seen) documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    }
    return {
      frequency,
      documentFrequency,
      total: [...frequency.values()].reduce((sum, value) => sum + value, 0),
    };
  });
  const acrossClusters = new Map<string, number>();
  for (const { frequency } of counts)
    for (const [term, count] of frequency) acrossClusters.set(term, (acrossClusters.get(term) ?? 0) + count);
  const averageWords = counts.reduce((sum, count) => sum + count.total, 0) / Math.max(1, counts.length);
  return counts.map(({ frequency, documentFrequency, total }) =>
    [...frequency]
      .filter(([term]) => (documentFrequency.get(term) ?? 0) >= options.minDocuments)
      .map(([term, count]) => ({
        term,
        weight: (count / Math.max(1, total)) * Math.log(1 + averageWords / (acrossClusters.get(term) ?? 1)),
      }))
      .sort((a, b) => b.weight - a.weight || (a.term < b.term ? -1 : 1))
      .slice(0, options.top)
      .map(({ term, weight }) => ({ term, weight: Math.round(weight * 10_000) / 10_000 })),
  );
}
