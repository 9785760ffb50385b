/**
 * A document that cannot be converted (corrupt, encrypted, over a budget, of an unknown type).
 * The message is written for the person reading the failed message's lineage, so it names the
 * problem and, where one exists, the config field that would change the outcome.
 */
export class DocumentError extends Error {
  override name = 'DocumentError';
  /** The same bytes fail the same way: not retried. */
  readonly permanent = true;
}

/** Budgets every conversion runs under, so one hostile file costs a bounded amount of work. */
export interface ConversionLimits {
  /** Pages converted at most (PDF, PPTX slides); later pages are left out and counted. */
  maxPages: number;
  /** Bytes of decompressed ZIP entries read at most (DOCX, PPTX, XLSX). */
  maxUnzippedBytes: number;
  /** Wall-clock budget of one conversion, in milliseconds. */
  timeoutMs: number;
  signal?: AbortSignal;
}

/** What every converter returns; the adapter turns it into `{markdown, front_matter}`. */
export interface ConvertedDocument {
  markdown: string;
  title: string;
  /** As the document declares it (`en-US`, `nb`), or empty: the adapter detects it then. */
  declaredLanguage: string;
  description: string;
  /** PDF and PPTX only. */
  pageCount?: number;
  /** Set when `maxPages` cut the conversion short. */
  pagesConverted?: number;
}

/** Rejects with a DocumentError once `limits` run out, whatever `work` is doing. */
export async function withinBudget<T>(
  what: string,
  limits: ConversionLimits,
  work: () => Promise<T>,
  onTimeout?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let abortListener: (() => void) | undefined;
  const stop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      onTimeout?.();
      reject(new DocumentError(`${what} took longer than ${limits.timeoutMs} ms (timeout_seconds)`));
    }, limits.timeoutMs);
    if (limits.signal) {
      abortListener = () => {
        onTimeout?.();
        reject(new DocumentError(`${what} was cancelled`));
      };
      if (limits.signal.aborted) abortListener();
      else limits.signal.addEventListener('abort', abortListener, { once: true });
    }
  });
  try {
    return await Promise.race([work(), stop]);
  } finally {
    clearTimeout(timer);
    if (abortListener) limits.signal?.removeEventListener('abort', abortListener);
  }
}
