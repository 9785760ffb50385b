/**
 * The imports and re-exports of a TypeScript source that remain at run time (type-only ones
 * are erased by the compiler): what the architecture checks of the import graph read.
 */
export function runtimeImports(source: string): string[] {
  const found: string[] = [];
  // [^;]: a clause stops at its statement's end, so a package import never swallows the next one.
  for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)([^;]*?)\s+from\s+'([^']+)'/gm)) {
    const names = /^\{([\s\S]*)\}$/.exec((match[1] as string).trim())?.[1];
    const onlyTypes = names
      ?.split(',')
      .map((name) => name.trim())
      .filter(Boolean)
      .every((name) => name.startsWith('type '));
    if (!onlyTypes) found.push(match[2] as string);
  }
  for (const match of source.matchAll(/^import\s+'([^']+)'/gm)) found.push(match[1] as string);
  return found;
}

/** The relative ones of runtimeImports: the import graph among a project's own files. */
export function relativeRuntimeImports(source: string): string[] {
  return runtimeImports(source).filter((specifier) => specifier.startsWith('.'));
}
