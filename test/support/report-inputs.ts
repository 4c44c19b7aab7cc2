// A valid minimal report input, with overrides.

export const reportInput = (overrides: Record<string, unknown> = {}) => ({
  clientNames: 'Jordan Smith',
  inspectionDate: '2026-03-14',
  ...overrides,
});

/** A report input with every field but restId set, each to a value of its own; the inspectors must be the company's users. */
export const everyFieldInput = (inspectorEmails: string[], overrides: Record<string, unknown> = {}) => ({
  fromRestService: 'Acme CRM',
  clientNames: ['Jordan Smith', 'Casey Smith'],
  clientEmails: ['jordan@example.com', 'casey@example.com'],
  clientPhones: ['+1 555 0100', '+1 555 0101'],
  inspectionDate: '2026-03-14',
  address: '12 Elm Street',
  invoiceItems: ['Home inspection: $450', 'Sewer scope: $1,250.5'],
  yearBuilt: '1987',
  squareFeet: '2150',
  notes: 'Gate code 4321.',
  inspectorEmails,
  agentName: 'Riley Agent',
  agentEmail: 'riley@example.com',
  agentPhone: '+1 555 0199',
  ...overrides,
});
