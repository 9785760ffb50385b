/**
 * Output message ids derive from the input message id and the output's position, so a
 * message processed twice (redelivery, crash, two workers) yields the same ids and the
 * second set of outputs is recognised as already recorded.
 */
import { createHash } from 'node:crypto';

/** A UUID (version 8, RFC 9562 custom) from SHA-256 of `parent:index`. */
export function deriveMessageId(parentId: string, index: number): string {
  const bytes = createHash('sha256').update(`${parentId}:${index}`).digest().subarray(0, 16);
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x80;
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
