/**
 * Storage records (spec 2.9, 4.8). Published now so the contract is visible; the endpoints
 * arrive with the storage API (docs/spec-coverage.md). Field names mirror the sidecar.
 */
import { Type } from 'typebox';
import { FreeObject } from './common.js';

const objectFields = {
  key: Type.String(),
  size: Type.Integer({ minimum: 0 }),
  content_type: Type.String(),
  sha256: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
};

export const StorageObject = Type.Object(
  { ...objectFields, metadata: Type.Optional(FreeObject('sidecar metadata (include_metadata=true)')) },
  { $id: 'StorageObject' },
);

export const ListObjectsResponse = Type.Object(
  {
    objects: Type.Array(Type.Ref('StorageObject')),
    common_prefixes: Type.Array(Type.String(), { description: 'folders, with delimiter' }),
    execution_prefixes: Type.Array(
      Type.Object({
        prefix: Type.String(),
        execution_id: Type.String(),
        execution: Type.Optional(
          Type.Union([FreeObject('execution record (include_execution_info=true)'), Type.Null()]),
        ),
      }),
    ),
    total: Type.Integer({ minimum: 0, description: 'matching objects in all' }),
    limit: Type.Integer(),
    offset: Type.Integer(),
  },
  { $id: 'ListObjectsResponse' },
);

export const ObjectMetadataResponse = Type.Object(
  {
    ...objectFields,
    metadata: FreeObject('pipeline context: execution_id, stage, route_id, correlation_id, ...'),
  },
  { $id: 'ObjectMetadataResponse' },
);

export const BrowseResponse = Type.Object(
  {
    path: Type.String(),
    parent: Type.Union([Type.String(), Type.Null()]),
    directories: Type.Array(Type.Object({ name: Type.String(), path: Type.String() })),
    files: Type.Array(
      Type.Object({
        name: Type.String(),
        key: Type.String(),
        size: Type.Integer({ minimum: 0 }),
        content_type: Type.String(),
        created_at: Type.String({ format: 'date-time' }),
      }),
    ),
  },
  { $id: 'BrowseResponse' },
);

export const storageSchemas = [StorageObject, ListObjectsResponse, ObjectMetadataResponse, BrowseResponse];
