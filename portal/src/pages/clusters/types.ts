export interface GpuCell {
  index: number;
  model: string;
  memoryMib: number;
  /** 0..1000 of this GPU allocated. */
  allocatedMilli: number;
  /** Utilization from the profiler, 0..100; null when unknown. */
  busyPercent: number | null;
  healthy: boolean;
}

export interface NodeInfo {
  name: string;
  healthy: boolean;
  gpus: GpuCell[];
}

export interface ClusterInfo {
  id: string;
  name: string;
  healthy: boolean;
  lastSeenAt: string | null;
  nodes: NodeInfo[];
}
