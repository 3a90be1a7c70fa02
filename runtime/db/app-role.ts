/** The non-superuser role every request transaction switches to, so row-level security applies. */
export const APP_ROLE = 'fw_app';
