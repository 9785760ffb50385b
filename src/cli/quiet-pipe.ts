/**
 * A reader that goes away early (`weir search x | head -1`) closes the pipe: the next write
 * fails with EPIPE. That is the reader's choice, not an error: end quietly, status 0, instead
 * of an unhandled 'error' event and its stack trace.
 */
export function endQuietlyOnClosedPipe(
  streams: NodeJS.WriteStream[] = [process.stdout, process.stderr],
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  for (const stream of streams) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') exit(0);
      else throw error;
    });
  }
}
