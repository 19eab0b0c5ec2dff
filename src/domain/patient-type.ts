/**
 * Whether a patient has been to the provider's practice before (`patient_type`). Visit reasons have a
 * duration for each, schedule blocks and calendar timeslots may be for one only, and availability
 * and its summaries are computed for each. The one definition in the domain.
 */
export type PatientType = 'new' | 'existing';

/** Every patient type, in the order the API lists them. */
export const PATIENT_TYPES: readonly PatientType[] = ['new', 'existing'];
