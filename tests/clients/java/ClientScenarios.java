import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.ConsumerGroupDescription;
import org.apache.kafka.clients.admin.DescribeClusterResult;
import org.apache.kafka.clients.admin.MemberDescription;
import org.apache.kafka.clients.admin.NewPartitions;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Kafka's Java client (kafka-clients) against a fauxka cluster, its scenarios side by side in one JVM.
 * Usage: ClientScenarios BOOTSTRAP SCENARIO:TOPIC[,TOPIC...] ...
 * Each scenario prints one JSON line: what the client saw ({"scenario": name, ...}), or {"error": trace}.
 * The Python tests (tests/integration/test_java_client.py) make the assertions.
 */
public final class ClientScenarios {
    private static final Duration POLL = Duration.ofMillis(100);
    private static final long DEADLINE_MS = 60_000;

    private final String bootstrap;

    private ClientScenarios(String bootstrap) {
        this.bootstrap = bootstrap;
    }

    /** The scenarios run side by side (each its own clients, topics and group): the run takes as long as
     *  the slowest one. */
    public static void main(String[] args) throws InterruptedException {
        ClientScenarios scenarios = new ClientScenarios(args[0]);
        List<Thread> threads = new ArrayList<>();
        for (int i = 1; i < args.length; i++) {
            String[] parts = args[i].split(":", 2);
            Thread thread = new Thread(() -> scenarios.report(parts[0], List.of(parts[1].split(","))), parts[0]);
            thread.start();
            threads.add(thread);
        }
        for (Thread thread : threads) thread.join();
    }

    private void report(String name, List<String> topics) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("scenario", name);
        long start = System.nanoTime();
        try {
            result.putAll(switch (name) {
                case "produce" -> produceConsume(topics.get(0));
                case "group" -> group(topics.get(0));
                case "transactions" -> transactions(topics.get(0), topics.get(1));
                case "admin" -> admin(topics.get(0));
                case "push-leaders" -> ControllerPush.leaders(topics, producer("acks", "all"));
                case "push-stale" -> ControllerPush.stale(topics);
                // topic, client.rack, total, first: KIP-392's consumer (RackFollower.java)
                case "rack-follower" -> RackFollower.read(List.of(topics.get(0), topics.get(2), topics.get(3)),
                        consumer(null, "client.rack", topics.get(1)));
                default -> throw new IllegalArgumentException("unknown scenario " + name);
            });
        } catch (Throwable e) {
            java.io.StringWriter trace = new java.io.StringWriter();
            e.printStackTrace(new java.io.PrintWriter(trace));
            result.put("error", trace.toString());
        }
        result.put("seconds", (System.nanoTime() - start) / 1e9);
        synchronized (System.out) {
            System.out.println(Json.write(result));
            System.out.flush();
        }
    }

    // ---- produce and consume: keys, headers, timestamps, every codec, a null key and value ----

    private Map<String, Object> produceConsume(String topic) throws Exception {
        List<String> codecs = List.of("none", "gzip", "snappy", "lz4", "zstd");
        List<KafkaProducer<String, String>> producers = new ArrayList<>();  // one per codec, side by side
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        List<Future<RecordMetadata>> futures = new ArrayList<>();
        List<Map<String, Object>> sent = new ArrayList<>();
        try {
            for (String codec : codecs) {
                KafkaProducer<String, String> producer = producer("compression.type", codec, "linger.ms", "5");
                producers.add(producer);
                for (int i = 0; i < 4; i++) {
                    List<Header> headers = List.of(new RecordHeader("codec", codec.getBytes(StandardCharsets.UTF_8)),
                            new RecordHeader("index", new byte[] {(byte) i, (byte) 0xff}));
                    records.add(new ProducerRecord<>(topic, null, 1_700_000_000_000L + i, codec + "-key-" + i,
                            "value " + codec + " " + i, headers));
                    futures.add(producer.send(records.get(records.size() - 1)));
                }
                records.add(new ProducerRecord<>(topic, 2, null, null));
                futures.add(producer.send(records.get(records.size() - 1)));
            }
            for (int i = 0; i < records.size(); i++) {
                RecordMetadata meta = futures.get(i).get();
                ProducerRecord<String, String> record = records.get(i);
                Map<String, Object> entry = record(meta.partition(), meta.offset(), record.key(), record.value(),
                        record.headers());
                entry.put("timestamp", meta.timestamp());
                entry.put("codec", codecs.get(i / 5));
                sent.add(entry);
            }
        } finally {
            for (KafkaProducer<String, String> producer : producers) producer.close();
        }
        List<Map<String, Object>> received = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(null)) {
            List<TopicPartition> partitions = partitions(consumer, topic);
            consumer.assign(partitions);
            consumer.seekToBeginning(partitions);
            waitFor("every record consumed", () -> {
                for (ConsumerRecord<String, String> r : consumer.poll(POLL)) {
                    Map<String, Object> entry = record(r.partition(), r.offset(), r.key(), r.value(), r.headers());
                    entry.put("timestamp", r.timestamp());
                    entry.put("timestamp_type", r.timestampType().name);
                    received.add(entry);
                }
                return received.size() >= sent.size();
            });
        }
        return Map.of("sent", sent, "received", received);
    }

    // ---- a consumer group of two members: the split, the commits, a member leaving, a restart ----

    private Map<String, Object> group(String topic) throws Exception {
        String groupId = "java-group-" + topic;
        try (KafkaProducer<String, String> producer = producer()) {
            for (int i = 0; i < 40; i++) producer.send(new ProducerRecord<>(topic, i % 4, null, "g-" + i));
            producer.flush();
        }
        Map<String, Object> result = new LinkedHashMap<>();
        List<Map<String, Object>> events = new ArrayList<>();
        try (Admin admin = admin();
             KafkaConsumer<String, String> first = consumer(groupId, "client.id", "member-1");
             KafkaConsumer<String, String> second = consumer(groupId, "client.id", "member-2")) {
            first.subscribe(List.of(topic), listener("member-1", events));
            second.subscribe(List.of(topic), listener("member-2", events));
            List<KafkaConsumer<String, String>> members = List.of(first, second);
            Map<String, Integer> consumed = new TreeMap<>();
            waitFor("both members at the end of their own partitions", () -> {
                for (int m = 0; m < 2; m++) {
                    for (ConsumerRecord<String, String> r : members.get(m).poll(POLL)) {
                        consumed.merge("member-" + (m + 1), 1, Integer::sum);
                    }
                }
                Set<TopicPartition> a = first.assignment(), b = second.assignment();
                if (a.isEmpty() || b.isEmpty() || a.size() + b.size() != 4) return false;
                for (KafkaConsumer<String, String> member : members) {
                    for (TopicPartition tp : member.assignment()) {
                        if (member.position(tp, Duration.ofSeconds(10)) < 10) return false;
                    }
                }
                return true;
            });
            result.put("assignments", List.of(names(first.assignment()), names(second.assignment())));
            result.put("consumed", consumed);
            result.put("described_stable", describeGroup(admin, groupId));
            first.commitSync();
            second.commitSync();
            result.put("committed", committed(admin, groupId));

            first.close();  // LeaveGroup: the other member takes every partition
            waitFor("the remaining member owning every partition", () -> {
                second.poll(POLL);
                return second.assignment().size() == 4;
            });
            result.put("after_leave", names(second.assignment()));
            second.close();
            result.put("described_empty", describeGroup(admin, groupId));
            result.put("rebalance_events", events);
        }
        try (KafkaConsumer<String, String> restarted = consumer(groupId)) {
            restarted.subscribe(List.of(topic));
            List<String> seen = new ArrayList<>();
            waitFor("the restarted member's assignment", () -> {
                restarted.poll(POLL).forEach(r -> seen.add(r.value()));
                return restarted.assignment().size() == 4;
            });
            Map<String, Long> positions = new TreeMap<>();
            for (TopicPartition tp : restarted.assignment()) positions.put(tp.toString(), restarted.position(tp));
            restarted.poll(POLL).forEach(r -> seen.add(r.value()));
            result.put("restart_positions", positions);
            result.put("restart_seen", seen);
        }
        return result;
    }

    private static ConsumerRebalanceListener listener(String member, List<Map<String, Object>> events) {
        return new ConsumerRebalanceListener() {
            @Override
            public void onPartitionsRevoked(java.util.Collection<TopicPartition> partitions) {
                events.add(Map.of("member", member, "revoked", names(partitions)));
            }

            @Override
            public void onPartitionsAssigned(java.util.Collection<TopicPartition> partitions) {
                events.add(Map.of("member", member, "assigned", names(partitions)));
            }
        };
    }

    private static Map<String, Object> describeGroup(Admin admin, String groupId) throws Exception {
        ConsumerGroupDescription group = admin.describeConsumerGroups(List.of(groupId)).all().get().get(groupId);
        List<Map<String, Object>> members = new ArrayList<>();
        for (MemberDescription member : group.members()) {
            members.add(Map.of("client_id", member.clientId(),
                    "assignment", names(member.assignment().topicPartitions())));
        }
        members.sort((x, y) -> ((String) x.get("client_id")).compareTo((String) y.get("client_id")));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("state", group.state().toString());
        out.put("protocol", group.partitionAssignor());
        out.put("coordinator", group.coordinator().id());
        out.put("members", members);
        return out;
    }

    private static Map<String, Long> committed(Admin admin, String groupId) throws Exception {
        Map<String, Long> out = new TreeMap<>();
        admin.listConsumerGroupOffsets(groupId).partitionsToOffsetAndMetadata().get()
                .forEach((tp, offset) -> out.put(tp.toString(), offset.offset()));
        return out;
    }

    // ---- transactions: commit and abort, fencing, consume-transform-produce ----

    private Map<String, Object> transactions(String input, String output) throws Exception {
        Map<String, Object> result = new LinkedHashMap<>();
        String transactionalId = "java-txn-" + input;
        try (KafkaProducer<String, String> producer = producer("transactional.id", transactionalId)) {
            producer.initTransactions();
            sendInTransaction(producer, input, List.of("committed-0", "committed-1", "committed-2"), true);
            sendInTransaction(producer, input, List.of("aborted-0", "aborted-1", "aborted-2"), false);
            sendInTransaction(producer, input, List.of("committed-3", "committed-4"), true);

            // a new producer with the same transactional.id fences the first one
            try (KafkaProducer<String, String> successor = producer("transactional.id", transactionalId)) {
                successor.initTransactions();
                List<String> fencedChain = new ArrayList<>();
                try {
                    sendInTransaction(producer, input, List.of("from-the-fenced-producer"), true);
                } catch (Exception e) {
                    for (Throwable t = e; t != null; t = t.getCause()) fencedChain.add(t.getClass().getSimpleName());
                }
                result.put("fenced_errors", fencedChain);
                sendInTransaction(successor, input, List.of("committed-by-successor"), true);
            }
        }
        TopicPartition in = new TopicPartition(input, 0);
        result.put("read_committed", readAll(in, "read_committed"));
        result.put("read_uncommitted", readAll(in, "read_uncommitted"));

        String groupId = "java-ctp-" + input;
        try (KafkaConsumer<String, String> consumer = consumer(groupId, "isolation.level", "read_committed");
             KafkaProducer<String, String> producer = producer("transactional.id", groupId)) {
            consumer.subscribe(List.of(input));
            List<ConsumerRecord<String, String>> batch = new ArrayList<>();
            long end = consumer.endOffsets(List.of(in)).get(in);
            result.put("input_end_offset", end);
            waitFor("the committed input consumed", () -> {
                consumer.poll(POLL).forEach(batch::add);
                return consumer.assignment().contains(in) && consumer.position(in) >= end;
            });
            producer.initTransactions();
            producer.beginTransaction();
            for (ConsumerRecord<String, String> r : batch) {
                producer.send(new ProducerRecord<>(output, r.key(), r.value().toUpperCase()));
            }
            producer.sendOffsetsToTransaction(Map.of(in, new OffsetAndMetadata(consumer.position(in))),
                    consumer.groupMetadata());
            producer.commitTransaction();
            // the consumer's committed() asks for stable offsets: it waits out the commit markers
            Map<String, Long> committed = new TreeMap<>();
            consumer.committed(Set.of(in)).forEach((tp, offset) -> committed.put(tp.toString(), offset.offset()));
            result.put("ctp_committed", committed);
        }
        result.put("ctp_output", readAll(new TopicPartition(output, 0), "read_committed"));
        return result;
    }

    private static void sendInTransaction(KafkaProducer<String, String> producer, String topic, List<String> values,
                                          boolean commit) throws Exception {
        producer.beginTransaction();
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        for (String value : values) sent.add(producer.send(new ProducerRecord<>(topic, 0, "k", value)));
        for (Future<RecordMetadata> f : sent) f.get();  // in the log before the abort
        if (commit) producer.commitTransaction();
        else producer.abortTransaction();
    }

    /** Every value of one partition up to its end offset, with the given isolation level. */
    private List<String> readAll(TopicPartition tp, String isolation) throws Exception {
        List<String> values = new ArrayList<>();
        try (KafkaConsumer<String, String> consumer = consumer(null, "isolation.level", isolation)) {
            consumer.assign(List.of(tp));
            consumer.seekToBeginning(List.of(tp));
            long end = consumer.endOffsets(List.of(tp)).get(tp);
            waitFor("reading " + tp + " " + isolation, () -> {
                consumer.poll(POLL).forEach(r -> values.add(r.value()));
                return consumer.position(tp) >= end;
            });
        }
        return values;
    }

    // ---- admin: cluster, topics, configs, partitions ----

    private Map<String, Object> admin(String topic) throws Exception {
        Map<String, Object> result = new LinkedHashMap<>();
        try (Admin admin = admin()) {
            DescribeClusterResult cluster = admin.describeCluster();
            List<Map<String, Object>> nodes = new ArrayList<>();
            for (Node node : cluster.nodes().get()) {
                nodes.add(Map.of("id", node.id(), "host", node.host(), "port", node.port()));
            }
            nodes.sort((x, y) -> Integer.compare((Integer) x.get("id"), (Integer) y.get("id")));
            result.put("nodes", nodes);
            result.put("controller", cluster.controller().get().id());
            result.put("cluster_id", cluster.clusterId().get());

            NewTopic spec = new NewTopic(topic, 3, (short) 3)
                    .configs(Map.of("retention.ms", "3600000", "min.insync.replicas", "2"));
            admin.createTopics(List.of(spec)).all().get();
            result.put("create_again_error", errorName(() -> admin.createTopics(List.of(spec)).all().get()));
            result.put("described", describeTopic(admin, topic, 3));

            ConfigResource topicResource = new ConfigResource(ConfigResource.Type.TOPIC, topic);
            ConfigResource brokerResource = new ConfigResource(ConfigResource.Type.BROKER, "1");
            Map<ConfigResource, Config> configs =
                    admin.describeConfigs(List.of(topicResource, brokerResource)).all().get();
            result.put("topic_configs", entries(configs.get(topicResource)));
            result.put("broker_configs", entries(configs.get(brokerResource)));

            admin.incrementalAlterConfigs(Map.of(topicResource, List.of(
                    new AlterConfigOp(new ConfigEntry("retention.ms", "7200000"), AlterConfigOp.OpType.SET),
                    new AlterConfigOp(new ConfigEntry("min.insync.replicas", ""), AlterConfigOp.OpType.DELETE))))
                    .all().get();
            result.put("altered_configs", entries(admin.describeConfigs(List.of(topicResource)).all().get()
                    .get(topicResource)));

            admin.createPartitions(Map.of(topic, NewPartitions.increaseTo(5))).all().get();
            result.put("partitions_after_increase", describeTopic(admin, topic, 5).get("partitions"));

            result.put("listed_before_delete", admin.listTopics().names().get().contains(topic));
            admin.deleteTopics(List.of(topic)).all().get();
            waitFor("the topic gone from listTopics", () -> !get(() -> admin.listTopics().names().get()).contains(topic));
            result.put("describe_deleted_error", errorName(() -> admin.describeTopics(List.of(topic)).allTopicNames().get()));
        }
        return result;
    }

    /** describeTopics once the broker asked knows the topic with `partitions` partitions and their leaders
     *  (metadata spreads after CreateTopics and CreatePartitions answer, as in Kafka). */
    private static Map<String, Object> describeTopic(Admin admin, String topic, int partitions) throws Exception {
        Map<String, Object> out = new LinkedHashMap<>();
        waitFor("describeTopics of " + topic + " with " + partitions + " partitions", () -> {
            TopicDescription description;
            try {
                description = admin.describeTopics(List.of(topic)).allTopicNames().get().get(topic);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof UnknownTopicOrPartitionException) return false;
                throw new RuntimeException(e);
            } catch (InterruptedException e) {
                throw new RuntimeException(e);
            }
            if (description.partitions().size() != partitions) return false;
            // a broker that has read the new topic's assignment but not yet its partitions' states lists
            // them without leader and ISR (Kafka's brokers list a partition only with its state)
            if (description.partitions().stream().anyMatch(p -> p.leader() == null)) return false;
            List<Map<String, Object>> parts = new ArrayList<>();
            for (TopicPartitionInfo p : description.partitions()) {
                parts.add(Map.of("partition", p.partition(), "leader", p.leader() == null ? -1 : p.leader().id(),
                        "replicas", ids(p.replicas()), "isr", ids(p.isr())));
            }
            out.put("internal", description.isInternal());
            out.put("topic_id", description.topicId().toString());
            out.put("partitions", parts);
            return true;
        });
        return out;
    }

    private static Map<String, Object> entries(Config config) {
        Map<String, Object> out = new TreeMap<>();
        for (ConfigEntry entry : config.entries()) {
            out.put(entry.name(), List.of(String.valueOf(entry.value()), entry.source().name(), entry.isReadOnly(),
                    entry.isSensitive()));
        }
        return out;
    }

    // ---- helpers ----

    private interface Action {
        Object run() throws Exception;
    }

    /** The simple class name of the cause an action failed with, or null. */
    private static String errorName(Action action) {
        try {
            action.run();
            return null;
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName();
        } catch (Exception e) {
            return e.getClass().getSimpleName();
        }
    }

    private static <T> T get(java.util.concurrent.Callable<T> call) {
        try {
            return call.call();
        } catch (Exception e) {
            throw new RuntimeException(e);
        }
    }

    private static void waitFor(String what, BooleanSupplier done) throws InterruptedException {
        long deadline = System.currentTimeMillis() + DEADLINE_MS;
        while (!done.getAsBoolean()) {
            if (System.currentTimeMillis() > deadline) throw new IllegalStateException("timed out: " + what);
            Thread.sleep(10);
        }
    }

    private static Map<String, Object> record(int partition, long offset, String key, String value,
                                              Iterable<Header> headers) {
        List<List<String>> hs = new ArrayList<>();
        for (Header h : headers) hs.add(List.of(h.key(), HexFormat.of().formatHex(h.value())));
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("partition", partition);
        out.put("offset", offset);
        out.put("key", key);
        out.put("value", value);
        out.put("headers", hs);
        return out;
    }

    private static List<Integer> ids(List<Node> nodes) {
        List<Integer> out = new ArrayList<>();
        for (Node node : nodes) out.add(node.id());
        return out;
    }

    private static List<String> names(java.util.Collection<TopicPartition> partitions) {
        Set<String> sorted = new TreeSet<>();
        for (TopicPartition tp : partitions) sorted.add(tp.toString());
        return new ArrayList<>(sorted);
    }

    private static List<TopicPartition> partitions(KafkaConsumer<?, ?> consumer, String topic) {
        List<TopicPartition> out = new ArrayList<>();
        consumer.partitionsFor(topic).forEach(p -> out.add(new TopicPartition(topic, p.partition())));
        return out;
    }

    private Properties props(String... keyValues) {
        Properties props = new Properties();
        props.put("bootstrap.servers", bootstrap);
        // FAUXKA_CLIENT_CONFIG: a properties file of settings every client takes (security.protocol, ssl.*)
        String common = System.getenv("FAUXKA_CLIENT_CONFIG");
        if (common != null) {
            try (java.io.Reader reader = java.nio.file.Files.newBufferedReader(java.nio.file.Path.of(common))) {
                props.load(reader);
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }
        for (int i = 0; i < keyValues.length; i += 2) props.put(keyValues[i], keyValues[i + 1]);
        return props;
    }

    private Admin admin() {
        return Admin.create(props());
    }

    private KafkaProducer<String, String> producer(String... keyValues) {
        return new KafkaProducer<>(props(keyValues), new StringSerializer(), new StringSerializer());
    }

    private KafkaConsumer<String, String> consumer(String groupId, String... keyValues) {
        Properties props = props(keyValues);
        props.put("auto.offset.reset", "earliest");
        props.put("enable.auto.commit", "false");
        // a member notices a rebalance at its next heartbeat: Kafka's 3 s would make the group test slow
        props.put("heartbeat.interval.ms", "300");
        if (groupId != null) props.put("group.id", groupId);
        return new KafkaConsumer<>(props, new StringDeserializer(), new StringDeserializer());
    }
}
