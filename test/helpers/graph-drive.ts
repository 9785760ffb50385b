/**
 * The document library behind the Graph double (test/helpers/graph-double.ts): its files, each
 * change stamped on one clock, as `driveItem`s, and the `/root/delta` pages over them (two items
 * a page through `@odata.nextLink`, then an `@odata.deltaLink` whose token returns only later
 * changes, deletions as items with the `deleted` facet).
 */
import type { DriveFile } from './graph-double.js';

export interface StoredDriveFile extends DriveFile {
  changedAt: number;
  version: number;
  deleted?: boolean;
}

export class GraphDrive {
  private readonly stored = new Map<string, StoredDriveFile>();
  private clock = 0;

  constructor(
    readonly driveId: string,
    files: readonly DriveFile[],
  ) {
    for (const file of files) this.put(file);
  }

  /** Adds or replaces a file (a new version and eTag). */
  put(file: DriveFile): void {
    const previous = this.stored.get(file.id);
    this.stored.set(file.id, { ...file, changedAt: ++this.clock, version: (previous?.version ?? 0) + 1 });
  }

  remove(id: string): void {
    const file = this.stored.get(id);
    if (file) this.stored.set(id, { ...file, deleted: true, changedAt: ++this.clock });
  }

  /** A file that is not deleted. */
  find(id: string): StoredDriveFile | undefined {
    const file = this.stored.get(id);
    return file && !file.deleted ? file : undefined;
  }

  /**
   * Changes after `token` (all items without one), two a page, then the delta link. Next links
   * go to `nextLinkOrigin` when it is set (a hostile answer), else to `base`.
   */
  deltaPage(url: URL, base: string, nextLinkOrigin: string | undefined): Record<string, unknown> {
    const since = Number(url.searchParams.get('token') ?? 0);
    const skip = Number(url.searchParams.get('$skiptoken') ?? 0);
    const changed = [...this.stored.values()]
      .filter((file) => file.changedAt > since && (since > 0 || !file.deleted))
      .sort((a, b) => a.changedAt - b.changedAt);
    const items = [
      ...(since === 0
        ? [{ id: 'root', name: 'root', root: {}, folder: { childCount: this.stored.size } }]
        : []),
      ...changed.map((file) =>
        file.deleted ? { id: file.id, deleted: { state: 'deleted' } } : this.driveItem(file),
      ),
    ];
    const page = items.slice(skip, skip + 2);
    const body: Record<string, unknown> = { value: page };
    const driveId = this.driveId;
    if (skip + 2 < items.length) {
      const origin = nextLinkOrigin ? `${nextLinkOrigin}/v1.0` : base;
      body['@odata.nextLink'] =
        `${origin}/drives/${driveId}/root/delta?${since ? `token=${since}&` : ''}$skiptoken=${skip + 2}`;
    } else body['@odata.deltaLink'] = `${base}/drives/${driveId}/root/delta?token=${this.clock}`;
    return body;
  }

  private driveItem(file: StoredDriveFile) {
    const driveId = this.driveId;
    return {
      id: file.id,
      name: file.name,
      eTag: eTag(file),
      cTag: `"c:{${file.id}},${file.version}"`,
      size: file.bytes.length,
      lastModifiedDateTime: new Date(Date.UTC(2026, 1, 1, 0, file.changedAt)).toISOString(),
      webUrl: `https://contoso.sharepoint.com/sites/Engineering/Shared%20Documents/${file.folder ? `${encodeURI(file.folder)}/` : ''}${encodeURIComponent(file.name)}`,
      parentReference: {
        driveId,
        driveType: 'documentLibrary',
        path: `/drives/${driveId}/root:${file.folder ? `/${encodeURI(file.folder)}` : ''}`,
      },
      file: { mimeType: file.mimeType },
    };
  }
}

export const eTag = (file: StoredDriveFile) => `"{${file.id}},${file.version}"`;
