/**
 * Line counts of every function and file in src/, test/, bench/ and scripts/ (tests included),
 * from the TypeScript compiler's syntax tree, for the project standard "functions under 150
 * lines, files under 500".
 *
 * A function's length is the span from its first to its last line, nested functions included:
 * a factory that returns an object of closures counts as one long function, because a reader
 * has to hold all of it (and its shared closed-over state) at once. In a test file the callback
 * given to `describe`, `it`, `test` or `itWhere` is not counted as a function (it is the test's
 * outline, a list of cases); the functions inside it are.
 *
 *   npx tsx scripts/function-lengths.ts [--min 150] [--files] [tree ...]   (trees: all four)
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const functionLineLimit = 150;
export const fileLineLimit = 500;

export interface FunctionLength {
  /** Path relative to the repository root, with forward slashes. */
  file: string;
  /** Declared name, the variable or property it is assigned to, or `<anonymous>`. */
  name: string;
  /** Line of its first token, 1-based. */
  line: number;
  lines: number;
}

export interface FileLength {
  file: string;
  lines: number;
}

const repositoryRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The trees the limits hold in. */
export const measuredTrees = ['src', 'test', 'bench', 'scripts'] as const;

const codeFile = /\.(ts|mjs|cjs)$/;

/** Every .ts, .mjs and .cjs file under `directory`, tests included, as repository-relative paths. */
export function sourceFiles(directory = 'src'): string[] {
  const found: string[] = [];
  const visit = (relative: string) => {
    for (const entry of readdirSync(path.join(repositoryRoot, relative), { withFileTypes: true })) {
      const child = `${relative}/${entry.name}`;
      if (entry.isDirectory()) visit(child);
      else if (codeFile.test(entry.name) && !entry.name.endsWith('.d.ts')) found.push(child);
    }
  };
  visit(directory);
  return found.sort();
}

/** The calls whose callback, in a test file, is a test's outline rather than a function. */
const testOutlines = new Set(['describe', 'it', 'test', 'itWhere']);

/** `describe(...)`, `describe.each(...)(...)`, `it.skip(...)`, `itWhere(...)(...)`: the name it starts from. */
function calleeRoot(expression: ts.Expression): string | undefined {
  let current = expression;
  while (ts.isCallExpression(current) || ts.isPropertyAccessExpression(current)) current = current.expression;
  return ts.isIdentifier(current) ? current.text : undefined;
}

function isTestOutline(node: ts.Node): boolean {
  const parent = node.parent;
  if (!ts.isCallExpression(parent) || !parent.arguments.includes(node as ts.Expression)) return false;
  const root = calleeRoot(parent.expression);
  return root !== undefined && testOutlines.has(root);
}

function propertyNameText(name: ts.PropertyName | ts.BindingName): string | undefined {
  if (ts.isIdentifier(name) || ts.isPrivateIdentifier(name)) return name.text;
  if (ts.isStringLiteral(name) || ts.isNumericLiteral(name)) return name.text;
  return undefined;
}

/** The name a reader would look for: the declaration's own, or what the expression is bound to. */
function functionName(node: ts.SignatureDeclaration): string {
  if (node.name) {
    const own = propertyNameText(node.name as ts.PropertyName);
    if (own) return own;
  }
  const parent = node.parent;
  if (
    ts.isVariableDeclaration(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isPropertyDeclaration(parent)
  ) {
    return propertyNameText(parent.name) ?? '<anonymous>';
  }
  if (ts.isCallExpression(parent)) {
    // `app.get('/path', async () => ...)`: name the callback after the call and its first literal.
    const callee = parent.expression.getText();
    const firstArgument = parent.arguments[0];
    const label = firstArgument && ts.isStringLiteralLike(firstArgument) ? ` ${firstArgument.text}` : '';
    return `<callback of ${callee}${label}>`;
  }
  return '<anonymous>';
}

function lineOf(sourceFile: ts.SourceFile, position: number): number {
  return sourceFile.getLineAndCharacterOfPosition(position).line + 1;
}

/** Every function-like node in one file's text, with its line span. */
export function measureFunctions(file: string, text: string): FunctionLength[] {
  const kind = file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS;
  const sourceFile = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, kind);
  const testFile = file.endsWith('.test.ts');
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node) => {
    if (
      (ts.isFunctionDeclaration(node) ||
        ts.isFunctionExpression(node) ||
        ts.isArrowFunction(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isGetAccessorDeclaration(node) ||
        ts.isSetAccessorDeclaration(node)) &&
      node.body &&
      !(testFile && isTestOutline(node))
    ) {
      const first = lineOf(sourceFile, node.getStart(sourceFile));
      const last = lineOf(sourceFile, node.getEnd());
      found.push({ file, name: functionName(node), line: first, lines: last - first + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(sourceFile);
  return found;
}

/** Line count as an editor shows it: a final newline does not start another line. */
export function countFileLines(text: string): number {
  if (text.length === 0) return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}

export function measureSourceTree(directory = 'src'): { functions: FunctionLength[]; files: FileLength[] } {
  const functions: FunctionLength[] = [];
  const files: FileLength[] = [];
  for (const file of sourceFiles(directory)) {
    const text = readFileSync(path.join(repositoryRoot, file), 'utf8');
    functions.push(...measureFunctions(file, text));
    files.push({ file, lines: countFileLines(text) });
  }
  return { functions, files };
}

function main(): void {
  const argumentsGiven = process.argv.slice(2);
  const minIndex = argumentsGiven.indexOf('--min');
  const minimum = minIndex >= 0 ? Number(argumentsGiven[minIndex + 1]) : functionLineLimit;
  const trees = argumentsGiven.filter(
    (argument, index) => !argument.startsWith('--') && argumentsGiven[index - 1] !== '--min',
  );
  const measured = (trees.length > 0 ? trees : measuredTrees).map((tree) => measureSourceTree(tree));
  const functions = measured.flatMap((tree) => tree.functions);
  const files = measured.flatMap((tree) => tree.files);
  const long = functions.filter((entry) => entry.lines > minimum).sort((a, b) => b.lines - a.lines);
  for (const entry of long)
    console.log(`${String(entry.lines).padStart(5)}  ${entry.file}:${entry.line}  ${entry.name}`);
  console.log(`${long.length} of ${functions.length} functions over ${minimum} lines`);
  if (argumentsGiven.includes('--files')) {
    const longFiles = files.filter((entry) => entry.lines > fileLineLimit).sort((a, b) => b.lines - a.lines);
    for (const entry of longFiles) console.log(`${String(entry.lines).padStart(5)}  ${entry.file}`);
    console.log(`${longFiles.length} of ${files.length} files over ${fileLineLimit} lines`);
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
