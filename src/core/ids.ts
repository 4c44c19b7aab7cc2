const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids are UUIDs in the database; anything else can match nothing (and must not reach a uuid column). */
export const isUuid = (id: string): boolean => UUID.test(id);
