/** A numbered schema change: statements run in order, in one transaction, once per database. */
export interface Migration {
  readonly id: number;
  readonly name: string;
  /** One SQL statement each (the extended protocol takes one statement per query). */
  readonly statements: readonly string[];
}
