import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Manifest } from '../runtime/core/external-manifest.ts';
import { type ManifestDiagnostic, validateManifest } from '../runtime/external/manifest.ts';
import type { ExternalService } from '../runtime/core/app-definition.ts';
import { FwFailure } from '../runtime/core/failure.ts';

/** Where `fw manifest import` keeps the app's services (local state, like the embedded database). */
export const REGISTRY_FILE = '.fw/external-manifests.json';
/** A manifest at the app root is picked up without importing it. */
export const ROOT_MANIFEST = 'fw.manifest.json';

/** Whether a changed file is one of the app's manifest files (a change reloads the app in fw dev). */
export function isManifestFile(root: string, file: string): boolean {
  const rel = path.relative(root, file).split(path.sep).join('/');
  return rel === ROOT_MANIFEST || rel === REGISTRY_FILE;
}

interface Registry {
  services: Record<string, { manifest: Manifest; importedFrom: string }>;
}

/**
 * The app's external services: the root `fw.manifest.json` and the imported ones, each validated
 * again (a hand edit of the registry must not slip through). Problems come back with their file.
 */
export async function readExternalServices(root: string): Promise<{ services: ExternalService[]; problems: Array<{ file: string; message: string }> }> {
  const services: ExternalService[] = [];
  const problems: Array<{ file: string; message: string }> = [];
  const add = (value: unknown, file: string) => {
    const checked = validateManifest(value);
    if (!checked.ok) {
      const errors = checked.diagnostics.filter((d) => d.severity === 'error');
      problems.push({ file, message: `invalid manifest: ${errors.map((d) => `${d.path || '(root)'}: ${d.message}`).join('; ')}. Run fw manifest validate.` });
      return;
    }
    const name = checked.manifest!.service.name;
    const previous = services.find((s) => s.manifest.service.name === name);
    if (previous) {
      problems.push({ file, message: `service "${name}" is also defined in ${previous.source}; keep one.` });
      return;
    }
    services.push({ manifest: checked.manifest!, source: file, cwd: root });
  };
  const rootManifest = path.join(root, ROOT_MANIFEST);
  if (existsSync(rootManifest)) {
    const parsed = await readJson(rootManifest);
    if (parsed.ok) add(parsed.value, ROOT_MANIFEST);
    else problems.push({ file: ROOT_MANIFEST, message: `is not JSON: ${parsed.error}` });
  }
  const registry = await readRegistry(root);
  if (registry.problem) problems.push({ file: REGISTRY_FILE, message: registry.problem });
  for (const name of Object.keys(registry.value.services).sort()) add(registry.value.services[name]!.manifest, REGISTRY_FILE);
  services.sort((a, b) => a.manifest.service.name.localeCompare(b.manifest.service.name));
  return { services, problems };
}

export interface ImportResult {
  service: string;
  status: 'added' | 'updated' | 'unchanged';
  entries: number;
  importedFrom: string;
  file: string;
  /** Warnings of the imported manifest (fields its transport ignores); errors refuse the import. */
  diagnostics: ManifestDiagnostic[];
}

/**
 * `fw manifest import <file | url>`: validates a manifest — from a file, or from a running service's
 * `GET /manifest` (an http(s) base URL or the manifest URL itself) — and adds or updates its service in
 * `.fw/external-manifests.json`. Nothing is written when it is invalid.
 */
export async function importManifest(root: string, source: string): Promise<ImportResult> {
  const { value, from } = await fetchManifest(root, source);
  const checked = validateManifest(value);
  if (!checked.ok) {
    throw new FwFailure('invalid_manifest', `The manifest from ${from} is not valid; nothing was imported.`, {
      diagnostics: checked.diagnostics.map((d) => ({ path: d.path, code: d.code, severity: d.severity, message: d.message, hint: d.hint })),
      suggestions: [`fw manifest validate ${source} --json`],
    });
  }
  const manifest = checked.manifest!;
  const registry = await readRegistry(root);
  if (registry.problem) throw new FwFailure('invalid_registry', `${REGISTRY_FILE}: ${registry.problem}`, { suggestions: [`Fix or delete ${REGISTRY_FILE} and import again.`] });
  const name = manifest.service.name;
  const before = registry.value.services[name];
  const status = before === undefined ? 'added' : JSON.stringify(before.manifest) === JSON.stringify(manifest) && before.importedFrom === from ? 'unchanged' : 'updated';
  if (status !== 'unchanged') {
    registry.value.services[name] = { manifest, importedFrom: from };
    const sorted: Registry = { services: Object.fromEntries(Object.entries(registry.value.services).sort(([a], [b]) => a.localeCompare(b))) };
    const file = path.join(root, REGISTRY_FILE);
    await mkdir(path.dirname(file), { recursive: true });
    // Written whole and renamed into place: a crash never leaves half a registry.
    await writeFile(`${file}.tmp`, `${JSON.stringify(sorted, null, 2)}\n`);
    await rename(`${file}.tmp`, file);
  }
  return { service: name, status, entries: manifest.entries.length, importedFrom: from, file: REGISTRY_FILE, diagnostics: checked.diagnostics };
}

/** Reads a manifest file (relative to the app root) or a service's `GET /manifest`. */
export async function fetchManifest(root: string, source: string): Promise<{ value: unknown; from: string }> {
  if (/^https?:\/\//i.test(source)) {
    const url = new URL(source);
    if (!url.pathname.endsWith('/manifest')) url.pathname = `${url.pathname.replace(/\/+$/, '')}/manifest`;
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(5_000), headers: { accept: 'application/json' } });
    } catch (error) {
      throw new FwFailure('manifest_unreachable', `GET ${url} failed (${error instanceof Error ? error.message : String(error)}).`, { suggestions: ['Start the service first, or import its manifest file.'] });
    }
    if (!response.ok) throw new FwFailure('manifest_unreachable', `GET ${url} answered ${response.status}.`, { suggestions: ['The adapter serves its manifest at GET /manifest.'] });
    const text = await response.text();
    try {
      return { value: JSON.parse(text), from: url.toString() };
    } catch (error) {
      throw new FwFailure('bad_json', `GET ${url} did not return JSON: ${(error as Error).message}`);
    }
  }
  const file = path.resolve(root, source);
  if (!existsSync(file)) throw new FwFailure('not_found', `No manifest file at ${file}.`, { suggestions: ['fw manifest import ./fw.manifest.json', 'fw manifest import http://127.0.0.1:8787'] });
  const parsed = await readJson(file);
  if (!parsed.ok) throw new FwFailure('bad_json', `${source} is not JSON: ${parsed.error}`);
  return { value: parsed.value, from: path.relative(root, file).split(path.sep).join('/') || source };
}

async function readRegistry(root: string): Promise<{ value: Registry; problem?: string }> {
  const file = path.join(root, REGISTRY_FILE);
  if (!existsSync(file)) return { value: { services: {} } };
  const parsed = await readJson(file);
  if (!parsed.ok) return { value: { services: {} }, problem: `is not JSON: ${parsed.error}` };
  const services = (parsed.value as Registry | null)?.services;
  if (typeof services !== 'object' || services === null || Array.isArray(services)) return { value: { services: {} }, problem: 'has no "services" object.' };
  return { value: { services } };
}

async function readJson(file: string): Promise<{ ok: true; value: unknown } | { ok: false; error: string }> {
  try {
    return { ok: true, value: JSON.parse(await readFile(file, 'utf8')) };
  } catch (error) {
    return { ok: false, error: (error as Error).message };
  }
}
