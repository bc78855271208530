//! The units a monthly budget is set in. `budgets.unit` stores [`BudgetUnit::as_str`]; a test
//! checks that column's CHECK against [`BudgetUnit::ALL`].

named_enum! {
    /// What a budget's amount counts.
    pub enum BudgetUnit("budget unit") {
        /// The price book's currency, at contracted prices.
        Currency = "currency",
        /// GPU-hours, whatever their price.
        GpuHours = "gpu_hours",
    }
}
