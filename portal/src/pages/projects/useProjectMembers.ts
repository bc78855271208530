import type { PlannedResult } from '../../api/planned';
import { unavailable } from '../../api/planned';
import type { ProjectRole, RoleName } from '../../gql/graphql';

/** One row of members.planned.graphql. */
export interface Member {
  user: { id: string; subject: string; displayName: string | null; email: string | null };
  role: RoleName;
  via: 'PROJECT' | 'TENANT';
}

export type { ProjectRole };

/** Members of a project: waits for `Project.members` (see members.planned.graphql). */
export function useProjectMembers(_slug: string): PlannedResult<Member[]> {
  return unavailable(['Project.members']);
}
