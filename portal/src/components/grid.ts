// jsdom has no layout: the DataGrid's virtualization would render no rows in component tests.
export const gridEnvProps = import.meta.env.MODE === 'test' ? { disableVirtualization: true } : {};
