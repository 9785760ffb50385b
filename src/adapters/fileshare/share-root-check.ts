import { isUnderAllowedRoots } from '../../fileshare/local-share.js';
import type { Settings } from '../../settings.js';
import type { SettingsProblem } from '../adapter.js';

/** E211 when a step's local share root is outside the settings' fileshare_roots; none when unset. */
export function checkShareRoot(root: string | undefined, settings: Readonly<Settings>): SettingsProblem[] {
  if (root === undefined || isUnderAllowedRoots(root, settings.fileshare_roots)) return [];
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
