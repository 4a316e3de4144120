package dev.holdfast.benchmarks.jpa;

import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;
import jakarta.persistence.Version;

/** Benchmark aggregate root. */
@Entity
@Table(name = "holdfast_bench_opt_order")
public class BenchOrder {
    @Id
    public Long id;

    @Version
    public long version;

    public String state;
}
