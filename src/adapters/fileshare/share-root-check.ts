import path from 'node:path';
import { isUnderAllowedRoots } from '../../fileshare/local-share.js';
import type { Settings } from '../../settings.js';
import type { SettingsProblem } from '../adapter.js';

/**
 * E211 when a step's local share root is outside the settings' fileshare_roots; none when
 * unset. With `paths` (entries under the root), each entry is checked in place of the root.
 */
export function checkShareRoot(
  root: string | undefined,
  settings: Readonly<Settings>,
  paths: readonly string[] = [],
): SettingsProblem[] {
  if (root === undefined) return [];
  const outside =
    paths.length > 0
      ? paths.filter((entry) => !isUnderAllowedRoots(path.join(root, entry), settings.fileshare_roots))
      : isUnderAllowedRoots(root, settings.fileshare_roots)
        ? []
        : [''];
  if (outside.length === 0) return [];
  if (paths.length > 0) {
    return [
      {
        code: 'E211',
        field: ['paths'],
        message: `${outside.map((entry) => path.join(root, entry)).join(', ')} ${outside.length === 1 ? 'is' : 'are'} outside the allowed roots (${settings.fileshare_roots.join(', ') || 'none'})`,
        remediation:
          'Name paths under one of the fileshare_roots, or add them to WEIR_FILESHARE_ROOTS and restart.',
      },
    ];
  }
  return [
    {
      code: 'E211',
      field: ['root'],
      message: `share root ${root} is outside the allowed roots (${settings.fileshare_roots.join(', ') || 'none'})`,
      remediation:
        'Name a directory under one of the fileshare_roots, or add it to WEIR_FILESHARE_ROOTS and restart.',
    },
  ];
}
