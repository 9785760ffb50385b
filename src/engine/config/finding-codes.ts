/**
 * The catalogue of validation finding codes. Codes are stable: a code keeps its meaning
 * forever and a retired code is never reused. E1xx document structure, E2xx routes and
 * adapters, E3xx monitoring, W5xx advice. docs/validation-codes.md documents each one and a
 * test fails when a code here is missing there.
 */
export const findingCodes = {
  E100: { severity: 'error', title: 'YAML cannot be parsed' },
  E101: { severity: 'error', title: 'document is not a mapping' },
  E102: { severity: 'error', title: 'required field missing' },
  E103: { severity: 'error', title: 'field has the wrong type' },
  E104: { severity: 'error', title: 'field value not allowed' },
  E201: { severity: 'error', title: 'duplicate route id' },
  E202: { severity: 'error', title: 'unknown adapter type' },
  E203: { severity: 'error', title: 'adapter config invalid' },
  E204: { severity: 'error', title: 'destination names no route' },
  E205: { severity: 'error', title: 'metadata_extractor alias used' },
  E206: { severity: 'error', title: 'monitoring check used as an adapter type' },
  E207: { severity: 'error', title: 'replay used as an adapter type' },
  E208: { severity: 'error', title: 'duplicate stage name in a route' },
  E209: { severity: 'error', title: 'init_message names no route' },
  E210: { severity: 'error', title: 'batch on an adapter that does not accept batches' },
  E211: { severity: 'error', title: 'file-share root outside the allowed roots' },
  E212: { severity: 'error', title: 'embedding model not configured' },
  E213: { severity: 'error', title: 'LLM profile not configured or cannot answer the step' },
  E214: { severity: 'error', title: 'secret named by a step is not configured' },
  E215: { severity: 'error', title: 'secret would be sent to an origin it does not declare' },
  E216: { severity: 'error', title: 'routes fan out in a cycle' },
  E301: { severity: 'error', title: 'unknown monitoring check' },
  W501: { severity: 'warning', title: 'unknown field ignored' },
  W502: { severity: 'warning', title: 'route receives no messages' },
  W503: { severity: 'warning', title: 'stage after a terminal adapter' },
  W504: { severity: 'warning', title: 'fan-out outputs go nowhere' },
  W505: { severity: 'warning', title: 'stage sends to its own route' },
  W506: { severity: 'warning', title: 'routes send to each other in a cycle' },
  W507: { severity: 'warning', title: 'secret may be sent to any origin' },
} as const satisfies Record<string, { severity: 'error' | 'warning'; title: string }>;

export type FindingCode = keyof typeof findingCodes;
