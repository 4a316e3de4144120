package dev.holdfast.spring.boot;

import dev.holdfast.internal.Invariants;
import dev.holdfast.jdbc.ConnectionPool;
import dev.holdfast.jdbc.HoldfastTable;
import dev.holdfast.jdbc.dialect.Dialect;
import dev.holdfast.lease.GrantListener;
import dev.holdfast.lease.LeaseService;
import dev.holdfast.pessimistic.PessimisticLocks;
import dev.holdfast.pessimistic.offline.JdbcLockManager;
import dev.holdfast.pessimistic.offline.LockManager;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.sql.init.dependency.DatabaseInitializationDependencyConfigurer;
import org.springframework.boot.sql.init.dependency.DependsOnDatabaseInitialization;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.core.annotation.Order;
import org.springframework.core.env.Environment;
import org.springframework.jdbc.datasource.TransactionAwareDataSourceProxy;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import javax.sql.DataSource;

/**
 * Configures Holdfast from the application's single {@link DataSource}: the {@link Dialect} (detected,
 * or {@code holdfast.dialect}), {@link PessimisticLocks} and {@link TransactionalRowLocks} on it (observed by every {@link PessimisticLocks.Observer} bean; whose timeouts name their blockers, observed
 * through the pool: {@code holdfast.pessimistic.name-blockers}; {@code holdfast.application-name} names
 * the connections of a HikariCP pool), a {@link HoldfastExceptionTranslator}, the
 * offline {@link LockManager} (a {@link JdbcLockManager}, {@code holdfast.offline.*}), the
 * {@link LeaseService} ({@code holdfast.lease.*}; told of its grants by a {@link GrantListener} bean; its MariaDB
 * wake-up connections leave the pool through a {@link ConnectionPool} bean, HikariCP's by default) and their tables
 * ({@link HoldfastDataSourceScriptDatabaseInitializer}, {@code holdfast.jdbc.initialize-schema}). Every
 * bean backs off when the application defines its own; {@code holdfast.enabled=false} turns all of it off. The
 * lock manager's and the lease service's calls go through every {@link LockManagerDecorator} and
 * {@link LeasesDecorator} bean (meters, observations, exception translation), so each is one bean whichever of
 * its types is injected. The beans throw Spring's {@code DataAccessException}s ({@link HoldfastExceptionTranslator}),
 * wherever they are called from, with Holdfast's exception as the cause.
 *
 * <p>Lock operations commit on their own, whatever transaction the caller has open: the lock
 * manager is given the pool itself, never a {@link TransactionAwareDataSourceProxy} (one is
 * unwrapped), so it borrows its own connection in autocommit mode.
 */
@AutoConfiguration(afterName = "org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration")
@ConditionalOnSingleCandidate(DataSource.class)
@ConditionalOnBooleanProperty(name = "holdfast.enabled", matchIfMissing = true)
@EnableConfigurationProperties(HoldfastProperties.class)
@Import(DatabaseInitializationDependencyConfigurer.class)
public class HoldfastAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    Dialect holdfastDialect(DataSource dataSource, HoldfastProperties properties) {
        return properties.getDialect() != null ? properties.getDialect() : Dialect.detect(dataSource);
    }

    @Bean
    @ConditionalOnMissingBean
    PessimisticLocks holdfastPessimisticLocks(
            Dialect dialect,
            DataSource dataSource,
            HoldfastProperties properties,
            ObjectProvider<PessimisticLocks.Observer> observers,
            HoldfastExceptionTranslator translator) {
        PessimisticLocks locks = (properties.getPessimistic().isNameBlockers()
                        ? PessimisticLocks.of(dialect).blockersFrom(nonTransactional(dataSource))
                        : PessimisticLocks.of(dialect).withoutBlockers())
                .failuresAs(translator::translate);
        PessimisticLocks.Observer observer =
                Observers.all(observers.orderedStream().toList());
        return observer == null ? locks : locks.observedBy(observer);
    }

    /** Row locks on the current Spring transaction's connection, through the {@link PessimisticLocks} bean. */
    @Bean
    @ConditionalOnMissingBean
    TransactionalRowLocks holdfastTransactionalRowLocks(PessimisticLocks locks, DataSource dataSource) {
        // the transaction manager binds the pool, not a proxy around it: look the connection up by the pool
        return new TransactionalRowLocks(locks, nonTransactional(dataSource));
    }

    /** {@code holdfast.application-name}: names the connections of a HikariCP pool. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "com.zaxxer.hikari.HikariDataSource")
    @ConditionalOnProperty("holdfast.application-name")
    static class ApplicationNameConfiguration {

        @Bean
        static ApplicationNamePostProcessor holdfastApplicationNamePostProcessor(Environment environment) {
            return new ApplicationNamePostProcessor(environment.getRequiredProperty("holdfast.application-name"));
        }
    }

    /** HikariCP: the lease service's MariaDB wake-up connections leave the pool without its warnings. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "com.zaxxer.hikari.HikariDataSource")
    static class HikariConnectionPoolConfiguration {

        @Bean
        @ConditionalOnMissingBean
        ConnectionPool holdfastConnectionPool(DataSource dataSource) {
            return HikariConnectionPool.of(nonTransactional(dataSource));
        }
    }

    @Bean
    @ConditionalOnMissingBean
    static HoldfastExceptionTranslator holdfastExceptionTranslator() {
        return new HoldfastExceptionTranslator();
    }

    /** Outermost around the lease service's calls: callers get Spring's exceptions, the meters Holdfast's. */
    @Bean
    @Order(LeasesDecorator.TRANSLATION_ORDER)
    @ConditionalOnMissingBean(name = "holdfastTranslatingLeases")
    static LeasesDecorator holdfastTranslatingLeases(HoldfastExceptionTranslator translator) {
        return leases -> new TranslatingLeases(leases, translator);
    }

    /** Outermost around the lock manager's calls, as for the leases. */
    @Bean
    @Order(LeasesDecorator.TRANSLATION_ORDER)
    @ConditionalOnMissingBean(name = "holdfastTranslatingLockManager")
    static LockManagerDecorator holdfastTranslatingLockManager(HoldfastExceptionTranslator translator) {
        return locks -> new TranslatingLockManager(locks, translator);
    }

    /** Holdfast's tables, as {@code holdfast.jdbc.initialize-schema} says (by default on embedded databases only). */
    @Bean
    @ConditionalOnMissingBean
    HoldfastDataSourceScriptDatabaseInitializer holdfastDataSourceScriptDatabaseInitializer(
            DataSource dataSource, Dialect dialect, HoldfastProperties properties) {
        return new HoldfastDataSourceScriptDatabaseInitializer(
                nonTransactional(dataSource),
                dialect,
                properties.getJdbc().getInitializeSchema(),
                Map.of(
                        HoldfastTable.OFFLINE_LOCKS, properties.getOffline().getTable(),
                        HoldfastTable.LEASES, properties.getLease().getTable()));
    }

    @Bean
    @ConditionalOnMissingBean(LockManager.class)
    @DependsOnDatabaseInitialization
    JdbcLockManager holdfastLockManager(
            DataSource dataSource,
            Dialect dialect,
            HoldfastProperties properties,
            ObjectProvider<LockManagerDecorator> decorators) {
        HoldfastProperties.Offline offline = properties.getOffline();
        JdbcLockManager.Builder builder = JdbcLockManager.builder(nonTransactional(dataSource));
        innermostFirst(decorators).forEach(d -> builder.decoratedBy(d::decorate));
        return builder.dialect(dialect)
                .table(offline.getTable())
                .defaultExpiry(offline.getDefaultExpiry())
                .maxExpiry(offline.getMaxExpiry())
                .ownerBinding(offline.isOwnerBinding())
                .durability(offline.getDurability())
                .build();
    }

    /**
     * Leases on the pool itself (never the caller's transaction: a lease commits on its own), in
     * {@code holdfast.lease.table}. Closed with the context (stops keep-alive threads and the
     * PostgreSQL listener; leases stay as they are).
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    @DependsOnDatabaseInitialization
    LeaseService holdfastLeaseService(
            DataSource dataSource,
            Dialect dialect,
            HoldfastProperties properties,
            ObjectProvider<GrantListener> grantListener,
            ObjectProvider<ConnectionPool> pool,
            ObjectProvider<LeasesDecorator> decorators) {
        LeaseService.Builder builder = LeaseService.builder(nonTransactional(dataSource));
        grantListener.ifUnique(builder::onGrant);
        pool.ifUnique(builder::connectionPool);
        innermostFirst(decorators).forEach(d -> builder.decoratedBy(d::decorate));
        return builder.dialect(dialect)
                .table(properties.getLease().getTable())
                .durability(properties.getLease().getDurability())
                .cohortHandOffs(properties.getLease().getCohortHandOffs())
                .batching(properties.getLease().getBatching())
                .build();
    }

    /** The decorators from the last in order (innermost) to the first: a builder makes the last one given the outermost. */
    private static <T> List<T> innermostFirst(ObjectProvider<T> decorators) {
        List<T> ordered = new ArrayList<>(decorators.orderedStream().toList());
        Collections.reverse(ordered);
        return ordered;
    }

    /**
     * The pool behind {@code dataSource}: a {@link TransactionAwareDataSourceProxy} would hand the lock
     * manager the connection of the caller's transaction, so a lock taken inside a transaction that
     * rolls back would vanish (and switching that connection to autocommit would commit the caller's
     * work early).
     */
    static DataSource nonTransactional(DataSource dataSource) {
        DataSource ds = dataSource;
        while (ds instanceof TransactionAwareDataSourceProxy proxy) {
            // a proxy without a target fails Spring's own afterPropertiesSet; say so here too
            ds = Invariants.nonNull(proxy.getTargetDataSource(), "TransactionAwareDataSourceProxy without a target");
        }
        return ds;
    }
}
