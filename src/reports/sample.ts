import type { Report } from '../api-types.js';

/**
 * The id of the sample report that test deliveries carry. No report ever has it: report ids come
 * from gen_random_uuid(), whose 122 random bits are never all zero in practice, and it is never
 * inserted, so a receiver that looks it up finds nothing.
 */
export const SAMPLE_REPORT_ID = '00000000-0000-4000-8000-000000000000';

/** A published report with every field filled, as a real publish would send it, dated `at`. */
export function sampleReport(at: Date): Report {
  const timestamp = at.toISOString();
  return {
    id: SAMPLE_REPORT_ID,
    address: '12 Elm Street, Springfield, IL 62701',
    clientName: 'Jordan Smith, Casey Smith',
    clientEmail: 'jordan@example.com, casey@example.com',
    clientPhone: '+1 555 0100',
    agentName: 'Riley Agent',
    agentEmail: 'riley@example.com',
    agentPhone: '+1 555 0199',
    inspectorName: 'Dana Inspector',
    inspectorEmail: 'dana@example.com',
    inspectorNotes: 'A sample report sent by a test delivery; it exists nowhere.',
    inspectionDate: `${timestamp.slice(0, 10)}T00:00:00.000Z`,
    fromRestService: 'REST API',
    restId: 'sample',
    publishedUrl: 'https://reports.example.com/sample',
    status: 'published',
    yearBuilt: '1987',
    squareFeet: '2150',
    invoiceItems: ['Home inspection: $450.00', 'Radon test: $150.00'],
    createdAt: timestamp,
    updatedAt: timestamp,
  };
}
