/**
 * `npx tsx bench/concept-labels.ts`: offline concept detection's precision and recall against
 * the concepts labelled by hand in test/fixtures/concepts (see test/helpers/concept-labels.ts),
 * per corpus, with each page's wrong and missed concepts when VERBOSE=1.
 */
import { loadLabelledCorpus, offlineDetection, scoreDetections } from '../test/helpers/concept-labels.js';

for (const name of ['bees', 'weir-docs']) {
  const corpus = await loadLabelledCorpus(name);
  const score = scoreDetections(corpus, offlineDetection(corpus));
  const percent = (value: number) => `${(value * 100).toFixed(1)} %`;
  console.log(
    `${name}: precision ${percent(score.precision)} (${score.right}/${score.detected}), recall ${percent(score.recall)} (${score.found}/${score.labels})`,
  );
  if (process.env.VERBOSE)
    for (const page of score.pages)
      console.log(
        `  ${page.source_id}\n    detected: ${page.detected.join('; ')}\n    wrong: ${page.wrong.join('; ')}\n    missed: ${page.missed.join('; ')}`,
      );
}
