// The labels naming what an engine object belongs to. Berth owns what it creates on a host (the
// workload kit's owners.ts checks them on every call); the hosts plugin reads them to tell Berth's
// platform network and services from anyone else's.

/** The label naming the kind of the owning record (application, postgres...; `platform` for the platform network). */
export const KIND_LABEL = 'berth.kind';
/** The label naming the owning record's id: the one every ownership check compares. */
export const ID_LABEL = 'berth.id';
/** The label naming the owning record's organization. */
export const ORGANIZATION_LABEL = 'berth.organization';
