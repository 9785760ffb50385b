import { describe, expect, it, vi } from 'vitest';
import type { Frame } from './frames.js';
import { createReceiptWaiters } from './receipts.js';

function frame(command: string, headers: Record<string, string>, body = ''): Frame {
  return { command, headers, body: new TextEncoder().encode(body) };
}

describe('receipt waiters', () => {
  it('resolves a send on the RECEIPT naming its receipt, not on another', async () => {
    const receipts = createReceiptWaiters();
    let sentReceipt = '';
    let resolved = false;
    const sending = receipts
      .send(
        (receipt) => {
          sentReceipt = receipt;
        },
        'a test send',
        5000,
      )
      .then(() => {
        resolved = true;
      });
    receipts.onFrame(frame('RECEIPT', { 'receipt-id': 'another' }));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(resolved).toBe(false);
    receipts.onFrame(frame('RECEIPT', { 'receipt-id': sentReceipt }));
    await sending;
    expect(resolved).toBe(true);
  });

  it('rejects a send on an ERROR naming its receipt, with the message header or else the body', async () => {
    const receipts = createReceiptWaiters();
    const receiptIds: string[] = [];
    const withHeader = receipts.send((receipt) => receiptIds.push(receipt), 'a', 5000);
    const withBody = receipts.send((receipt) => receiptIds.push(receipt), 'b', 5000);
    receipts.onFrame(frame('ERROR', { 'receipt-id': receiptIds[0] ?? '', message: 'queue refused' }));
    receipts.onFrame(frame('ERROR', { 'receipt-id': receiptIds[1] ?? '' }, 'no such vhost'));
    await expect(withHeader).rejects.toThrow('STOMP error: queue refused');
    await expect(withBody).rejects.toThrow('STOMP error: no such vhost');
  });

  it('rejects every waiting send when the connection is lost', async () => {
    const receipts = createReceiptWaiters();
    const first = receipts.send(() => {}, 'first', 5000);
    const second = receipts.send(() => {}, 'second', 5000);
    receipts.connectionLost();
    await expect(first).rejects.toThrow('STOMP connection lost');
    await expect(second).rejects.toThrow('STOMP connection lost');
  });

  it('rejects a send that got no RECEIPT within its time limit, naming what was sent', async () => {
    const receipts = createReceiptWaiters();
    await expect(receipts.send(() => {}, 'a send to /queue/slow', 20)).rejects.toThrow(
      'no RECEIPT for a send to /queue/slow within 20 ms',
    );
  });

  it('ends a DISCONNECT wait on its RECEIPT, on loss, or after the grace time, never with an error', async () => {
    const receipts = createReceiptWaiters();
    let disconnectReceipt = '';
    const answered = receipts.sendAndWaitAtMost((receipt) => {
      disconnectReceipt = receipt;
    }, 60_000);
    receipts.onFrame(frame('RECEIPT', { 'receipt-id': disconnectReceipt }));
    await expect(answered).resolves.toBeUndefined();
    const lost = receipts.sendAndWaitAtMost(() => {}, 60_000);
    receipts.connectionLost();
    await expect(lost).resolves.toBeUndefined();
    const startedAt = performance.now();
    await expect(receipts.sendAndWaitAtMost(() => {}, 30)).resolves.toBeUndefined();
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(25);
  });

  it('lets a send that throws fail at once', async () => {
    const receipts = createReceiptWaiters();
    await expect(
      receipts.send(
        () => {
          throw new Error('STOMP connection is not open');
        },
        'a send',
        20,
      ),
    ).rejects.toThrow('STOMP connection is not open');
  });

  it('leaves no timer behind when a write throws, for a send or a DISCONNECT wait', async () => {
    vi.useFakeTimers();
    try {
      const receipts = createReceiptWaiters();
      const failing = () => {
        throw new Error('STOMP connection is not open');
      };
      await expect(receipts.send(failing, 'a send', 60_000)).rejects.toThrow('not open');
      await expect(receipts.sendAndWaitAtMost(failing, 60_000)).resolves.toBeUndefined();
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
