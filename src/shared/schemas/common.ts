import { Type, type Static } from 'typebox';

/** The spec's Error body: every error the API answers has this shape. */
export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'Human-readable message' }),
    code: Type.Optional(Type.String({ description: 'Stable UPPER_SNAKE error code' })),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
  },
  { title: 'Error' },
);
export type ErrorBodyT = Static<typeof ErrorBody>;

export const DateTime = (description?: string) => Type.String({ format: 'date-time', description });

/** Response schemas for the error statuses a route can answer. */
export function errorResponses(...statuses: number[]): Record<number, typeof ErrorBody> {
  return Object.fromEntries(statuses.map((s) => [s, ErrorBody]));
}
