/**
 * Output message ids derive from the input message id and the output's position, so a
 * message processed twice (redelivery, crash, two workers) yields the same ids and the
 * second set of outputs is recognised as already recorded.
 */
import { sha256Uuid } from '../runtime/sha256-uuid.js';

/** A UUID (version 8, RFC 9562 custom) from SHA-256 of `parent:index`. */
export function deriveMessageId(parentId: string, index: number): string {
  return sha256Uuid(`${parentId}:${index}`);
}
