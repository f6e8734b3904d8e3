import org.apache.kafka.common.TopicPartition;
import java.util.*;
public class Order {
    // args: groups "topic:p,p,p" ... ; prints Kafka's partitions=[...] text
    public static void main(String[] args) {
        scala.collection.mutable.Set<TopicPartition> set = scala.collection.mutable.Set$.MODULE$.empty();
        for (String g : args) {
            String[] tp = g.split(":");
            List<TopicPartition> list = new ArrayList<>();
            for (String p : tp[1].split(",")) list.add(new TopicPartition(tp[0], Integer.parseInt(p)));
            scala.collection.immutable.Set<TopicPartition> s = scala.jdk.javaapi.CollectionConverters.asScala(list).toSet();
            set.addAll(s);
        }
        System.out.println(set.mkString("[", ",", "]"));
    }
}
