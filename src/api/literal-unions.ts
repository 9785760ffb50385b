/**
 * A union of literals (TypeBox `Union([Literal('pause'), Literal('resume')])`, in JSON Schema an
 * `anyOf` of `const`s) fails in Ajv as one `const` error per member and then the `anyOf` error.
 * Mapped one by one and deduplicated by location, the 422 named only the first allowed value.
 * Folded here into one `const` error carrying every allowed value (`params.allowedValues`).
 */
import type { SchemaError } from './validation-errors.js';

export function foldLiteralUnions(errors: readonly SchemaError[]): SchemaError[] {
  const folded = new Map<SchemaError, SchemaError>();
  const absorbed = new Set<SchemaError>();
  for (const union of errors) {
    if ((union.keyword !== 'anyOf' && union.keyword !== 'oneOf') || !union.schemaPath) continue;
    const prefix = `${union.schemaPath}/`;
    const members = errors.filter((error) => error.schemaPath?.startsWith(prefix));
    const literals = members.every(
      (member) => member.keyword === 'const' && member.instancePath === union.instancePath,
    );
    if (members.length === 0 || !literals) continue;
    for (const member of members) absorbed.add(member);
    folded.set(union, {
      keyword: 'const',
      instancePath: union.instancePath,
      schemaPath: union.schemaPath,
      params: { allowedValues: members.map((member) => member.params.allowedValue) },
      data: union.data,
    });
  }
  return errors.filter((error) => !absorbed.has(error)).map((error) => folded.get(error) ?? error);
}
