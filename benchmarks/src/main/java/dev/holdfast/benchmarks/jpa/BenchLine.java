package dev.holdfast.benchmarks.jpa;

import dev.holdfast.hibernate.AggregateMember;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.ManyToOne;
import jakarta.persistence.Table;

/** Benchmark aggregate member. */
@Entity
@Table(name = "holdfast_bench_opt_line")
public class BenchLine implements AggregateMember {
    @Id
    public Long id;

    @ManyToOne(optional = false)
    public BenchOrder order;

    public int quantity;

    @Override
    public Object aggregateRoot() {
        return order;
    }
}
