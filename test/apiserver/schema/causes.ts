import type { StatusCause } from '../../../src/kube/object.ts';
import { renderValue } from './value.ts';

/** Builders for `field.Error` causes with apimachinery's reasons and message prefixes. */
export const fieldErrors = {
  /** `field.Required`: `Required value` (plus `: detail`). */
  required(field: string, detail = ''): StatusCause {
    return { reason: 'FieldValueRequired', message: detail ? `Required value: ${detail}` : 'Required value', field };
  },
  /** `field.Invalid`: `Invalid value: <value>: <detail>`. */
  invalid(field: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueInvalid', message: `Invalid value: ${renderValue(value)}${detail ? `: ${detail}` : ''}`, field };
  },
  /** `field.TypeInvalid`: printed like Invalid, reason `FieldValueTypeInvalid`. */
  typeInvalid(field: string, value: unknown, detail: string): StatusCause {
    return { reason: 'FieldValueTypeInvalid', message: `Invalid value: ${renderValue(value)}: ${detail}`, field };
  },
  /** `field.NotSupported`: `Unsupported value: "x": supported values: "a", "b"`. */
  notSupported(field: string, value: unknown, supported: readonly string[]): StatusCause {
    const list = supported.map((s) => JSON.stringify(s)).join(', ');
    return { reason: 'FieldValueNotSupported', message: `Unsupported value: ${renderValue(value)}${supported.length ? `: supported values: ${list}` : ''}`, field };
  },
  /** `field.Forbidden`: `Forbidden: <detail>`. */
  forbidden(field: string, detail: string): StatusCause {
    return { reason: 'FieldValueForbidden', message: `Forbidden: ${detail}`, field };
  },
  /** `field.Duplicate`: `Duplicate value: <value>`. */
  duplicate(field: string, value: unknown): StatusCause {
    return { reason: 'FieldValueDuplicate', message: `Duplicate value: ${renderValue(value)}`, field };
  },
  /** `field.TooMany`: `Too many: <n>: must have at most <max> items`. */
  tooMany(field: string, actual: number, max: number): StatusCause {
    return { reason: 'FieldValueTooMany', message: `Too many: ${actual}: must have at most ${max} items`, field };
  },
  /** `field.TooLong`: `Too long: must have at most <max> bytes`. */
  tooLong(field: string, max: number): StatusCause {
    return { reason: 'FieldValueTooLong', message: `Too long: must have at most ${max} bytes`, field };
  },
} as const;
