/**
 * Whether a patient has been to the provider's practice before (`patient_type`). Visit reasons have a
 * duration for each, schedule blocks and calendar timeslots may be for one only, and availability
 * and its summaries are computed for each. The one definition in the domain.
 */
export type PatientType = 'new' | 'existing';
